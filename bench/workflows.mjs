// The workflows every benchmark runs, shared by the parent and by bench/worker.mjs.
import { defineWorkflow } from "../dist/src/index.js";

/** Steps per throughput workflow. */
export const STEPS = 10;

/** Ten trivial steps in a row: the throughput workload. */
export const tenSteps = defineWorkflow({
  name: "bench-ten-steps",
  version: "1",
  async run(ctx) {
    let total = 0;
    for (let i = 0; i < STEPS; i++) total = await ctx.step("s", () => total + 1);
    return total;
  },
});

/**
 * When each no-op step's function was called (performance.now()), by runId. Only this process's
 * live executions write here; the overhead bench runs one worker in-process, so nothing replays.
 */
export const stepMarks = new Map();

/** `input.steps` no-op steps in a row, each noting when it ran: the per-step overhead workload. */
export const noopSteps = defineWorkflow({
  name: "bench-noop-steps",
  version: "1",
  async run(ctx, input) {
    const marks = [];
    stepMarks.set(ctx.runId, marks);
    for (let i = 0; i < input.steps; i++) {
      await ctx.step("noop", () => {
        marks.push(performance.now());
        return null;
      });
    }
    return input.steps;
  },
});

export const workflows = [tenSteps, noopSteps];
