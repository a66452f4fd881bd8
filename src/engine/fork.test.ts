import { describe, expect, it } from "vitest";
import { STORE_KINDS, testEngine } from "../../test/support/engines.js";
import { isCairnError, RunConflictError, RunNotFoundError } from "../core/errors.js";
import { defineWorkflow } from "./define-workflow.js";
import type { Engine } from "./engine.js";

const fast = { pollInterval: 10 };

/** Three steps; `code.fix` stands for the code deployed since the original ran. */
function pipeline(code: { fix: boolean }, calls: string[]) {
  return defineWorkflow({
    name: "pipeline",
    async run(ctx, input: { n: number }) {
      const a = await ctx.step("fetch", () => (calls.push("fetch"), input.n));
      const b = await ctx.step("score", ({ idempotencyKey }) => (calls.push(`score:${idempotencyKey}`), a * 10));
      const c = await ctx.step("write", () => (calls.push("write"), code.fix ? `fixed ${b}` : `buggy ${b}`));
      return { a, b, c };
    },
  });
}

/** Seq of the entry of `kind` for `opKey`. */
async function seqOf(engine: Engine, runId: string, kind: string, opKey: string): Promise<number> {
  const entry = (await engine.journal(runId)).find((e) => e.kind === kind && e.opKey === opKey);
  expect(entry, `${kind} ${opKey}`).toBeDefined();
  return entry!.seq;
}

describe.each(STORE_KINDS)("engine.fork on %s", (kind) => {
  async function original() {
    const code = { fix: false };
    const calls: string[] = [];
    const wf = pipeline(code, calls);
    const engine = await testEngine(kind, { workflows: [wf] });
    const run = await engine.start(wf, { n: 4 }, { runId: "orig" });
    engine.startWorker(fast);
    expect(await run.result({ timeoutMs: 5000 })).toEqual({ a: 4, b: 40, c: "buggy 40" });
    calls.length = 0;
    return { engine, code, calls };
  }

  it("at a step boundary, replays the kept steps and runs only the later ones, under current code", async () => {
    const { engine, code, calls } = await original();
    const before = { run: await engine.getRun("orig"), journal: await engine.journal("orig") };
    code.fix = true;
    const atSeq = await seqOf(engine, "orig", "step.completed", "score#0");
    const fork = await engine.fork("orig", { atSeq, runId: "fork-1" });
    expect(fork).toMatchObject({ runId: "fork-1", created: true });
    expect(await fork.result({ timeoutMs: 5000 })).toEqual({ a: 4, b: 40, c: "fixed 40" });
    expect(calls).toEqual(["write"]);

    const journal = await engine.journal("fork-1");
    expect(journal.slice(1, atSeq).map((e) => [e.seq, e.kind, e.opKey, e.data])).toEqual(
      before.journal.slice(1, atSeq).map((e) => [e.seq, e.kind, e.opKey, e.data]),
    );
    expect(journal[0]).toMatchObject({ seq: 1, kind: "run.created", data: { workflow: "pipeline", version: "1", input: { n: 4 } } });
    expect(journal[atSeq]).toMatchObject({ seq: atSeq + 1, kind: "run.forked", data: { fromRunId: "orig", atSeq } });
    expect(journal.slice(atSeq + 1).map((e) => `${e.kind}${e.opKey ? ` ${e.opKey}` : ""}`)).toEqual([
      "run.claimed",
      "step.started write#0",
      "step.completed write#0",
      "run.completed",
    ]);
    // The original is untouched.
    expect(await engine.getRun("orig")).toEqual(before.run);
    expect(await engine.journal("orig")).toEqual(before.journal);
  });

  it("a patched step result is what the workflow sees", async () => {
    const { engine, code, calls } = await original();
    code.fix = true;
    const fetched = await seqOf(engine, "orig", "step.completed", "fetch#0");
    const fork = await engine.fork("orig", { atSeq: fetched, patch: { seq: fetched, result: 7 } });
    expect(await fork.result({ timeoutMs: 5000 })).toEqual({ a: 7, b: 70, c: "fixed 70" });
    expect(calls).toEqual([`score:${fork.runId}:score#0`, "write"]);
    const marker = (await engine.journal(fork.runId)).find((e) => e.kind === "run.forked");
    expect(marker?.data).toEqual({ fromRunId: "orig", atSeq: fetched, patchedSeq: fetched });
    expect((await engine.journal("orig")).find((e) => e.seq === fetched)?.data).toMatchObject({ result: 4 });
  });

  it("a cut after an intent without its outcome reconciles it by its effect, with the fork's idempotency key", async () => {
    const { engine, calls } = await original();
    const intent = await seqOf(engine, "orig", "step.started", "score#0");
    const fork = await engine.fork("orig", { atSeq: intent, runId: "fork-2" });
    expect(await fork.result({ timeoutMs: 5000 })).toEqual({ a: 4, b: 40, c: "buggy 40" });
    expect(calls).toEqual(["score:fork-2:score#0", "write"]);
  });

  it("forking again with the same runId and cut returns the same run; another fork under that id is a conflict", async () => {
    const { engine } = await original();
    const first = await engine.fork("orig", { atSeq: 4, runId: "again", patch: { seq: 4, result: 1 } });
    const second = await engine.fork("orig", { atSeq: 4, runId: "again", patch: { seq: 4, result: 1 } });
    expect([first.created, second.created]).toEqual([true, false]);
    expect((await engine.journal("again")).filter((e) => e.kind === "run.forked").map((e) => e.seq)).toEqual([5]);
    await expect(engine.fork("orig", { atSeq: 4, runId: "again", patch: { seq: 4, result: 2 } })).rejects.toBeInstanceOf(RunConflictError);
    await expect(engine.fork("orig", { atSeq: 3, runId: "again" })).rejects.toBeInstanceOf(RunConflictError);
    await expect(engine.fork("orig", { atSeq: 4, runId: "orig" })).rejects.toBeInstanceOf(RunConflictError);
  });

  it("refuses bad cuts and patches with clear errors, writing nothing", async () => {
    const { engine } = await original();
    const last = (await engine.getRun("orig")).entries;
    const runsBefore = (await engine.listRuns()).runs.length;
    const refused = async (options: Parameters<Engine["fork"]>[1], message: RegExp) => {
      const error = await engine.fork("orig", options).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(isCairnError(error, "INVALID_INPUT"), `atSeq ${options.atSeq}: ${String(error)}`).toBe(true);
      expect((error as Error).message).toMatch(message);
    };
    await refused({ atSeq: last + 1 }, new RegExp(`past the end of run "orig", whose last entry is seq ${last}`));
    await refused({ atSeq: 0 }, /atSeq: must be 1 or more/);
    await refused({ atSeq: 2.5 }, /atSeq: must be a whole number/);
    await refused({ atSeq: 6, patch: { seq: 3, result: 1 } }, /patch.seq 3 is a step.started entry.*only step.completed/);
    await refused({ atSeq: 3, patch: { seq: 4, result: 1 } }, /patch.seq 4 is after atSeq 3/);
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    await refused({ atSeq: 4, patch: { seq: 4, result: cyclic } }, /patch.result cannot be stored/);
    await refused({ atSeq: 4, runId: "has space" }, /runId: must not contain whitespace/);
    await expect(engine.fork("ghost", { atSeq: 1 })).rejects.toBeInstanceOf(RunNotFoundError);
    expect((await engine.listRuns()).runs.length).toBe(runsBefore);
  });

  it("refuses a cut inside an unanswered human request, naming where to cut instead", async () => {
    const wf = defineWorkflow({
      name: "approve",
      async run(ctx) {
        const reply = await ctx.askHuman({ name: "ok", question: "Ship it?", options: ["yes", "no"] });
        return ctx.step("ship", () => reply.option);
      },
    });
    const engine = await testEngine(kind, { workflows: [wf] });
    const run = await engine.start(wf, undefined, { runId: "ask" });
    engine.startWorker(fast);
    const [request] = await waitForRequest(engine);
    await engine.respondToHuman(request!.requestId, { action: "answer", option: "yes" });
    expect(await run.result({ timeoutMs: 5000 })).toBe("yes");
    const asked = await seqOf(engine, "ask", "human.requested", "ok#0");
    const answered = await seqOf(engine, "ask", "human.answered", "ok#0");
    await expect(engine.fork("ask", { atSeq: asked })).rejects.toThrow(
      new RegExp(`cuts "ok#0".*between its human.requested \\(seq ${asked}\\).*Fork at seq ${asked - 1} or earlier, or at seq ${answered} or later`),
    );
    const fork = await engine.fork("ask", { atSeq: answered });
    expect(await fork.result({ timeoutMs: 5000 })).toBe("yes");
  });
});

async function waitForRequest(engine: Engine) {
  for (let i = 0; i < 500; i++) {
    const requests = await engine.listHumanRequests({ status: "pending" });
    if (requests.length > 0) return requests;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error("no human request");
}
