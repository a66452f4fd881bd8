import { describe, expect, it } from "vitest";
import { STORE_KINDS, testEngine } from "../../test/support/engines.js";
import { defineWorkflow } from "./define-workflow.js";

const fast = { pollInterval: 10 };

describe.each(STORE_KINDS)("a run's first claim on %s", (kind) => {
  it("starts a run claimed from the backlog without reading its journal, and replays a woken one from it", async () => {
    const calls: string[] = [];
    const wf = defineWorkflow({
      name: "first-claim",
      async run(ctx, input: { nap: boolean }) {
        const a = await ctx.step("a", () => (calls.push("a"), 1));
        if (input.nap) await ctx.sleep("nap", 30);
        return ctx.step("b", () => (calls.push("b"), a + 1));
      },
    });
    const engine = await testEngine(kind, { workflows: [wf] });
    const reads: string[] = [];
    const store = engine.store;
    const read = store.readJournalForResume.bind(store);
    store.readJournalForResume = (runId) => (reads.push(runId), read(runId));
    // Started before any worker: pending, then claimed from the backlog (epoch 1, journal run.created + run.claimed).
    const backlog = await engine.start(wf, { nap: false }, { runId: "backlog" });
    const napper = await engine.start(wf, { nap: true }, { runId: "napper" });
    engine.startWorker(fast);
    expect(await backlog.result({ timeoutMs: 5000 })).toBe(2);
    expect(await napper.result({ timeoutMs: 5000 })).toBe(2);
    // The napper's second claim (from suspended) reads its journal and replays step a without running it.
    expect(reads).toEqual(["napper"]);
    expect(calls.sort()).toEqual(["a", "a", "b", "b"]);
    const claims = (await engine.journal("napper")).filter((e) => e.kind === "run.claimed");
    expect(claims).toHaveLength(2);
  });
});
