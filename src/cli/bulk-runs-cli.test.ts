import { execFile } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { NonRetryableError } from "../core/errors.js";
import { createEngine } from "../engine/create-engine.js";
import { defineWorkflow } from "../engine/define-workflow.js";
import { silentLogger } from "../engine/logger.js";
import { waitFor } from "../testing/wait-for.js";
import { onCleanup, tempDir } from "../../test/support/engines.js";
import { requireBuild } from "../../test/support/processes.js";

const MAIN = fileURLToPath(new URL("../../dist/src/cli/main.js", import.meta.url));
const run = promisify(execFile);

async function cli(store: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [MAIN, ...args], { env: { ...process.env, CAIRN_STORE: store } });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

const waiter = defineWorkflow({ name: "waiter", version: "1", run: (ctx) => ctx.waitForEvent("never") });
const parent = defineWorkflow({
  name: "parent",
  version: "1",
  run: (ctx) => Promise.all([1, 2].map((n) => ctx.child(waiter, null, { name: `c${n}` }))),
});
const failing = defineWorkflow({
  name: "failing",
  version: "1",
  run: (ctx) =>
    ctx.step("call", () => {
      throw new NonRetryableError("upstream 503");
    }),
});

describe("cairn runs: --top-level, a time range, and bulk cancel / retry of the selected runs", () => {
  it("lists top-level runs only; cancel and retry list first, act with --yes, each audited with bulk: true", async () => {
    requireBuild();
    const store = `sqlite:${join(tempDir(), "cairn.db")}`;
    const engine = await createEngine({ store, workflows: [waiter, parent, failing], logger: silentLogger });
    onCleanup(() => engine.close());
    const worker = engine.startWorker({ pollInterval: 10 });
    for (const n of [1, 2]) await engine.start(waiter, null, { runId: `w-${n}` });
    await engine.start(parent, null, { runId: "p" });
    for (const n of [1, 2]) await engine.start(failing, null, { runId: `f-${n}` });
    await waitFor(
      async () => {
        const all = (await engine.listRuns({ limit: 100 })).runs;
        return all.length === 7 && all.every((r) => r.status === "suspended" || r.status === "failed");
      },
      { what: "every run to wait or fail", timeoutMs: 15_000 },
    );
    await worker.stop();
    const children = (await engine.listRuns({ limit: 100 })).runs.filter((r) => r.parentRunId).map((r) => r.runId);
    expect(children).toHaveLength(2);
    // A system run (as the alert evaluator writes them): listed only when --workflow names its workflow.
    await engine.store.createRun({ runId: "cairn.alert/x", workflow: "cairn.alert", version: "1", input: "null" }, Date.now());

    const ids = async (...args: string[]) =>
      (JSON.parse((await cli(store, "runs", "--json", ...args)).stdout) as { runId: string }[]).map((r) => r.runId).sort();
    expect(await ids("--top-level")).toEqual(["f-1", "f-2", "p", "w-1", "w-2"]);
    expect(await ids("--workflow", "waiter")).toEqual([...children, "w-1", "w-2"].sort());
    expect(await ids("--workflow", "cairn.alert")).toEqual(["cairn.alert/x"]);
    expect(await ids()).toHaveLength(7);
    expect(await ids("--created-after", "1h")).toHaveLength(7);
    expect(await ids("--created-before", "1h")).toEqual([]);
    expect((await cli(store, "runs", "--created-before", "1h")).stdout).toBe("No runs match.\n");
    const badTime = await cli(store, "runs", "--created-after", "yesterday");
    expect(badTime.code).toBe(2);
    expect(badTime.stderr).toMatch(/--created-after.*yesterday.*Not a duration or a date/);

    // Without --yes: what would be cancelled, nothing done.
    const dry = await cli(store, "runs", "cancel", "--workflow", "waiter", "--top-level");
    expect(dry).toMatchObject({ code: 0 });
    const [head, ...listed] = dry.stdout.trimEnd().split("\n");
    expect(head).toBe("2 runs would be cancelled:");
    expect(listed.sort()).toEqual(["  w-1", "  w-2"]);
    expect(dry.stderr).toContain("Add --yes to cancel these 2");
    expect((await engine.getRun("w-1")).status).toBe("suspended");

    const cancelled = await cli(store, "runs", "cancel", "--workflow", "waiter", "--top-level", "--reason", "cleanup", "--yes");
    expect(cancelled).toMatchObject({ code: 0, stdout: "Cancelled 2 runs.\n" });
    for (const id of ["w-1", "w-2"]) expect((await engine.getRun(id)).status).toBe("cancelled");
    // The children were left out by --top-level.
    for (const id of children) expect((await engine.getRun(id)).status).toBe("suspended");
    const cancels = await engine.store.listAudit({ action: "run.cancel" });
    expect(cancels.map((e) => e.target).sort()).toEqual(["w-1", "w-2"]);
    expect(cancels.every((e) => e.actor.startsWith("cli:") && (e.detail as { bulk: boolean; reason: string }).bulk && e.detail!.reason === "cleanup")).toBe(
      true,
    );

    // Retry takes only failed runs, whatever --status says otherwise.
    const retried = JSON.parse((await cli(store, "runs", "retry", "--status", "failed,suspended", "--json", "--yes")).stdout) as { done: string[] };
    expect(retried.done.sort()).toEqual(["f-1", "f-2"]);
    expect((await engine.getRun("f-1")).status).toBe("pending");
    expect((await engine.store.listAudit({ action: "run.retry" })).map((e) => e.target).sort()).toEqual(["f-1", "f-2"]);
    expect((await cli(store, "runs", "retry", "--workflow", "failing", "--yes")).stdout).toBe("No failed run matches; nothing to retry.\n");

    // Refused: no filter at all (every live run), a retry with a reason, a mistyped subcommand.
    const unfiltered = await cli(store, "runs", "cancel", "--yes");
    expect(unfiltered.code).toBe(2);
    expect(unfiltered.stderr).toContain("needs at least one filter");
    expect((await cli(store, "runs", "retry", "--workflow", "failing", "--reason", "x")).code).toBe(2);
    const typo = await cli(store, "runs", "cancle", "--workflow", "waiter");
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain('Unknown subcommand "cancle" of runs: use cancel or retry');
    for (const id of children) expect((await engine.getRun(id)).status).toBe("suspended");
  });
});
