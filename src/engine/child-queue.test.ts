import { describe, expect, it } from "vitest";
import { testEngine } from "../../test/support/engines.js";
import { defineWorkflow } from "./define-workflow.js";

describe("child runs and flow control", () => {
  it("a child joins its workflow's default queue, so the queue's concurrency holds for children too", async () => {
    let inside = 0;
    let most = 0;
    const job = defineWorkflow({
      name: "job",
      queue: "one-at-a-time",
      async run(ctx, n: number) {
        return ctx.step("work", async () => {
          inside += 1;
          most = Math.max(most, inside);
          await new Promise((resolve) => setTimeout(resolve, 30));
          inside -= 1;
          return n * 2;
        });
      },
    });
    const parent = defineWorkflow({
      name: "parent",
      async run(ctx) {
        return Promise.all([1, 2, 3, 4].map((n) => ctx.child(job, n, { name: `job-${n}` })));
      },
    });
    const engine = await testEngine("sqlite", { workflows: [job, parent], queues: { "one-at-a-time": { concurrency: 1 } } });
    const worker = engine.startWorker({ concurrency: 8, pollInterval: 5 });
    const handle = await engine.start(parent, undefined, { runId: "p" });
    expect(await handle.result({ timeoutMs: 20_000 })).toEqual([2, 4, 6, 8]);
    await worker.stop();
    expect(most).toBe(1);
    const journal = await engine.journal("p");
    expect(journal.filter((e) => e.kind === "child.started").map((e) => (e.data as { flow?: { queue: string } }).flow?.queue)).toEqual([
      "one-at-a-time",
      "one-at-a-time",
      "one-at-a-time",
      "one-at-a-time",
    ]);
  });
});
