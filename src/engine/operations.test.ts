import { describe, expect, it } from "vitest";
import { STORE_KINDS, testEngine } from "../../test/support/engines.js";
import { waitFor } from "../testing/wait-for.js";
import { defineWorkflow } from "./define-workflow.js";

describe.each(STORE_KINDS)("operational visibility on %s", (kind) => {
  it("lists live workers with what they hold, and forgets them when they stop", async () => {
    const wf = defineWorkflow({ name: "hold", run: async (ctx) => ctx.waitForEvent("never") });
    const engine = await testEngine(kind, { workflows: [wf] });
    const worker = engine.startWorker({ pollInterval: 10, workerId: "w-1", heartbeatMs: 20 });
    const [listed] = await waitFor(async () => {
      const workers = await engine.listWorkers();
      return workers.length === 1 && workers;
    });
    expect(listed).toMatchObject({ workerId: "w-1", pid: process.pid, workflows: ["hold@1"], runsHeld: 0 });
    await worker.stop({ drain: true });
    expect(await engine.listWorkers()).toEqual([]);
  });

  it("finds stuck runs: runnable but unclaimed past the grace period, or suspended with nothing to wait for", async () => {
    let now = Date.UTC(2030, 0, 1);
    const orphan = defineWorkflow({ name: "orphan", version: "7", run: async () => 1 });
    const engine = await testEngine(kind, { workflows: [], clock: () => now });
    await engine.start(orphan, undefined, { runId: "unclaimed" });
    expect(await engine.listStuckRuns({ graceMs: 60_000 })).toEqual([]);
    now += 120_000;
    const stuck = await engine.listStuckRuns({ graceMs: 60_000 });
    expect(stuck.map((r) => [r.runId, r.status])).toEqual([["unclaimed", "pending"]]);
  });
});
