import { describe, expect, it } from "vitest";
import { deferred, sharedEngines, STORE_KINDS, testEngine } from "../../test/support/engines.js";
import { isCairnError } from "../core/errors.js";
import { defineWorkflow } from "../engine/define-workflow.js";
import type { Engine } from "../engine/engine.js";
import { waitFor } from "../testing/wait-for.js";
import { applyEdit, checkPlan, initialState, type PlanState } from "./plan-graph.js";
import { planViews } from "./plan-view.js";
import { createPlan, runPlan, type DepResults, type PlanResult } from "./plan.js";

const fast = { pollInterval: 10 };
const once = { retry: { maxAttempts: 1 } };

async function ops(engine: Engine, runId: string, kind: string): Promise<string[]> {
  return (await engine.journal(runId)).filter((e) => e.kind === kind).map((e) => e.opKey ?? "");
}

describe("plan graph validation", () => {
  it("refuses duplicate ids, unknown deps, bad ids and cycles, naming the cycle", () => {
    const node = (id: string, deps: string[] = []) => ({ id, deps, kind: "step" as const });
    expect(() => checkPlan("p", [node("a"), node("a")])).toThrow(/two nodes with id "a"/);
    expect(() => checkPlan("p", [node("a", ["zz"])])).toThrow(/"a" depends on "zz", which is not in the plan/);
    expect(() => checkPlan("p", [node("a/b")])).toThrow(/node id "a\/b" is invalid/);
    expect(() => checkPlan("p", [node("a", ["c"]), node("b", ["a"]), node("c", ["b"]), node("d")])).toThrow(/cycle: a → c → b → a/);
    expect(() => checkPlan("p", [node("a", ["a"])])).toThrow(/cycle: a → a/);
  });

  it("applies edits only to pending nodes: add, remove, reorder; never reuses ids", () => {
    const node = (id: string, deps: string[] = []) => ({ id, deps, kind: "step" as const });
    const state: PlanState = initialState("p", checkPlan("p", [node("a"), node("b"), node("c"), node("d", ["c"])]));
    state.nodes[0]!.status = "done";
    const next = applyEdit(state, { add: [node("e", ["a"])], remove: ["b"], order: ["e", "d", "c"] });
    expect(next.nodes.map((n) => n.id)).toEqual(["a", "e", "d", "c"]);
    expect(next.revision).toBe(1);
    expect(state.nodes.map((n) => n.id)).toEqual(["a", "b", "c", "d"]);
    expect(() => applyEdit(state, { remove: ["a"] })).toThrow(/cannot remove "a": it is done; only pending nodes can be edited/);
    expect(() => applyEdit(state, { order: ["a", "b"] })).toThrow(/cannot reorder "a": it is done/);
    expect(() => applyEdit(state, { remove: ["c"] })).toThrow(/"d" depends on it/);
    expect(() => applyEdit(next, { add: [node("b")] })).toThrow(/"b" was used by a removed node/);
    expect(() => applyEdit(state, { add: [node("x", ["y"]), node("y", ["x"])] })).toThrow(/cycle: x → y → x/);
  });
});

describe.each(STORE_KINDS)("Plan DAG: parallel execution, failure propagation, revision (%s)", (kind) => {
  it("runs ready nodes in parallel and hands dependency results on", async () => {
    const gates = { a: deferred<string>(), b: deferred<string>() };
    const started: string[] = [];
    const wf = defineWorkflow({
      name: "parallel",
      run: (ctx) =>
        runPlan(ctx, "fan", [
          { id: "a", run: () => (started.push("a"), gates.a.promise) },
          { id: "b", run: () => (started.push("b"), gates.b.promise) },
          { id: "c", deps: ["a", "b"], run: (deps) => (started.push("c"), `${String(deps.a)}+${String(deps.b)}`) },
        ]),
    });
    const engine = await testEngine(kind, { workflows: [wf] });
    engine.startWorker(fast);
    await engine.start(wf, undefined, { runId: "par" });
    // Both root nodes are running at once, before either finishes.
    await waitFor(() => started.length === 2, { what: "a and b both started" });
    expect(started.sort()).toEqual(["a", "b"]);
    gates.b.resolve("B");
    await waitFor(async () => (await ops(engine, "par", "step.completed")).includes("plan-fan:b#0"));
    expect(started).not.toContain("c");
    gates.a.resolve("A");
    const result = (await engine.result("par", { timeoutMs: 5000 })) as PlanResult;
    expect(result).toEqual({
      ok: true,
      revision: 0,
      nodes: { a: { status: "done", result: "A" }, b: { status: "done", result: "B" }, c: { status: "done", result: "A+B" } },
    });
  });

  it("skips the transitive dependents of a failed node while independent branches go on", async () => {
    const ran: string[] = [];
    const wf = defineWorkflow({
      name: "failing",
      run: (ctx) =>
        runPlan(ctx, "p", [
          { id: "fetch", run: () => (ran.push("fetch"), "page") },
          {
            id: "parse",
            deps: ["fetch"],
            options: once,
            run: () => {
              ran.push("parse");
              throw new Error("malformed page");
            },
          },
          { id: "index", deps: ["parse"], run: () => ran.push("index") },
          { id: "report", deps: ["index", "fetch"], run: () => ran.push("report") },
          { id: "other", run: () => (ran.push("other"), 1) },
          { id: "other2", deps: ["other"], run: (d) => (ran.push("other2"), (d.other as number) + 1) },
        ]),
    });
    const engine = await testEngine(kind, { workflows: [wf] });
    engine.startWorker(fast);
    await engine.start(wf, undefined, { runId: "fail" });
    const result = (await engine.result("fail", { timeoutMs: 5000 })) as PlanResult;
    expect(result.ok).toBe(false);
    expect(result.nodes.parse).toMatchObject({ status: "failed", error: { name: "Error", message: "malformed page" } });
    expect(result.nodes.index).toEqual({ status: "skipped", skippedBecause: "parse" });
    expect(result.nodes.report).toEqual({ status: "skipped", skippedBecause: "index" });
    expect(result.nodes.other2).toEqual({ status: "done", result: 2 });
    expect(ran.sort()).toEqual(["fetch", "other", "other2", "parse"]);

    // `cairn show` rebuilds the same statuses from the journal alone.
    const views = planViews(await engine.journal("fail"));
    expect(views).toHaveLength(1);
    expect(Object.fromEntries(views[0]!.state.nodes.map((n) => [n.id, n.status]))).toEqual(
      Object.fromEntries(Object.entries(result.nodes).map(([id, n]) => [id, n.status])),
    );
  });

  it("revises between waves: add, remove and reorder pending nodes; editing a done node is refused", async () => {
    const ran: string[] = [];
    const step = (id: string, deps: string[] = []) => ({ id, deps, run: () => (ran.push(id), id.toUpperCase()) });
    let refused = "";
    const wf = defineWorkflow({
      name: "revising",
      async run(ctx) {
        const plan = await createPlan(ctx, "r", [step("a"), step("b", ["a"]), step("c", ["a"]), step("d", ["a"])], { maxConcurrency: 2 });
        expect(await plan.runWave()).toBe(1);
        try {
          await plan.revise({ remove: ["a"] });
        } catch (error) {
          refused = isCairnError(error, "INVALID_INPUT") ? (error as Error).message : "wrong error";
        }
        // d goes first and b is dropped; e is new and depends on a (done) and d.
        await plan.revise({ remove: ["b"], order: ["d", "c"], add: [step("e", ["a", "d"])] });
        return plan.run({
          revise: (p) => (p.status("e") === "pending" && p.status("x") === undefined ? { add: [step("x", ["e"])] } : undefined),
        });
      },
    });
    const engine = await testEngine(kind, { workflows: [wf] });
    engine.startWorker(fast);
    await engine.start(wf, undefined, { runId: "rev" });
    const result = (await engine.result("rev", { timeoutMs: 5000 })) as PlanResult;
    expect(refused).toBe('Plan "r": cannot remove "a": it is done; only pending nodes can be edited.');
    expect(Object.keys(result.nodes)).toEqual(["a", "d", "c", "e", "x"]);
    expect(Object.values(result.nodes).every((n) => n.status === "done")).toBe(true);
    expect(result.revision).toBe(2);
    // With maxConcurrency 2 the second wave takes the first two ready nodes in the revised order.
    expect(ran).toEqual(["a", "d", "c", "e", "x"]);
    const steps = await ops(engine, "rev", "step.completed");
    expect(steps.filter((k) => k.startsWith("plan-r~rev"))).toEqual(["plan-r~rev#0", "plan-r~rev#1"]);
    const view = planViews(await engine.journal("rev"))[0]!;
    expect(view.state.revision).toBe(2);
    expect(view.state.nodes.map((n) => `${n.id}:${n.status}`)).toEqual(["a:done", "d:done", "c:done", "e:done", "x:done"]);
  });

  it("runs child nodes as child runs and reports their failure", async () => {
    const child = defineWorkflow({
      name: "sub",
      async run(_ctx, input: { n: number }) {
        if (input.n < 0) throw new Error("negative");
        return input.n * 10;
      },
    });
    const wf = defineWorkflow({
      name: "parent",
      run: (ctx) =>
        runPlan(ctx, "kids", [
          { id: "seed", run: () => 4 },
          { id: "ten", deps: ["seed"], workflow: child, input: (d: DepResults) => ({ n: d.seed as number }) },
          { id: "bad", workflow: child, input: { n: -1 } },
          { id: "after-bad", deps: ["bad"], run: () => "never" },
        ]),
    });
    const engine = await testEngine(kind, { workflows: [wf, child] });
    engine.startWorker(fast);
    await engine.start(wf, undefined, { runId: "kids" });
    const result = (await engine.result("kids", { timeoutMs: 5000 })) as PlanResult;
    expect(result.nodes.ten).toEqual({ status: "done", result: 40 });
    expect(result.nodes.bad?.status).toBe("failed");
    expect(result.nodes.bad?.error?.message).toContain("negative");
    expect(result.nodes["after-bad"]?.status).toBe("skipped");
    expect((await ops(engine, "kids", "child.started")).sort()).toEqual(["plan-kids:bad#0", "plan-kids:ten#0"]);
    const view = planViews(await engine.journal("kids"))[0]!;
    expect(view.state.nodes.find((n) => n.id === "ten")).toMatchObject({ kind: "child", workflow: "sub", status: "done", result: 40 });
  });

  it("rejects an invalid plan before journaling anything", async () => {
    const wf = defineWorkflow({
      name: "cyclic",
      run: (ctx) =>
        runPlan(ctx, "loop", [
          { id: "a", deps: ["b"], run: () => 1 },
          { id: "b", deps: ["a"], run: () => 2 },
        ]),
    });
    const engine = await testEngine(kind, { workflows: [wf] });
    engine.startWorker(fast);
    await engine.start(wf, undefined, { runId: "cyc" });
    await expect(engine.result("cyc", { timeoutMs: 5000 })).rejects.toThrow(/cycle: a → b → a/);
    expect(await ops(engine, "cyc", "step.started")).toEqual([]);
  });

  it("resumes on another worker after a crash without running a finished node or revision again", async () => {
    const runs: Record<string, number> = {};
    const hang = deferred<string>();
    let crashed = false;
    let revisions = 0;
    const count = (id: string) => (runs[id] = (runs[id] ?? 0) + 1);
    const wf = defineWorkflow({
      name: "resumable",
      run: (ctx) =>
        runPlan(
          ctx,
          "job",
          [
            { id: "a", run: () => (count("a"), "a") },
            { id: "b", run: () => (count("b"), "b") },
            { id: "slow", deps: ["a"], run: () => (count("slow"), crashed ? "slow-again" : hang.promise) },
          ],
          {
            revise: (plan) => {
              if (plan.status("c") !== undefined) return undefined;
              revisions += 1;
              return { add: [{ id: "c", deps: ["b"], run: () => (count("c"), "c") }] };
            },
          },
        ),
    });
    const [first, second] = await sharedEngines(kind, [wf], [wf]);
    const worker = first!.startWorker(fast);
    await first!.start(wf, undefined, { runId: "crash" });
    await waitFor(() => runs.slow === 1 && runs.c === 1, { what: "the second wave running" });
    await waitFor(async () => (await ops(first!, "crash", "step.completed")).includes("plan-job:c#0"));
    // The worker dies while `slow` is running: nothing more is written by it.
    await worker.stop({ drain: false });
    crashed = true;
    second!.startWorker(fast);
    const result = (await second!.result("crash", { timeoutMs: 5000 })) as PlanResult;
    expect(result.ok).toBe(true);
    expect(result.nodes.slow).toEqual({ status: "done", result: "slow-again" });
    expect(runs).toEqual({ a: 1, b: 1, c: 1, slow: 2 });
    expect((await ops(second!, "crash", "step.completed")).filter((k) => k.startsWith("plan-job~rev"))).toEqual(["plan-job~rev#0"]);
    // The reviser is workflow code: it ran again on replay (and asked for the same edit), but the edit was journaled once.
    expect(revisions).toBe(2);
  });
});
