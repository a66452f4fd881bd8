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

/**
 * What a process watching bench workflows wants told (each is optional): the process sets them.
 * `workflowStarted(runId)` when a bench-resume or bench-loop run's code starts (a replay, after a crash);
 * `afterSteps(runId)` is the body of that run's last step (bench-loop: its last iteration's step), the one in flight at the crash;
 * `stepEntered(runId)` when a bench-wake run's step after its event starts.
 */
export const hooks = { workflowStarted: null, afterSteps: null, stepEntered: null };

/** `input.steps` trivial steps, then the step "after" (in flight when the resume bench crashes the worker). */
export const resumeSteps = defineWorkflow({
  name: "bench-resume",
  version: "1",
  async run(ctx, input) {
    hooks.workflowStarted?.(ctx.runId);
    let total = 0;
    for (let i = 0; i < input.steps; i++) total = await ctx.step("s", () => total + 1);
    await ctx.step("after", () => (hooks.afterSteps ? hooks.afterSteps(ctx.runId) : null));
    return total;
  },
});

/**
 * A durable loop of `input.iterations` iterations of one trivial step each (state: the running total),
 * snapshotted every `input.snapshotEvery`; iteration `input.iterations` runs the step "after" (in flight
 * when the loop-resume bench crashes the worker) and ends the loop with the total.
 */
export const loopSteps = defineWorkflow({
  name: "bench-loop",
  version: "1",
  async run(ctx, input) {
    hooks.workflowStarted?.(ctx.runId);
    return ctx.loop(
      "iterate",
      0,
      async (total, it) => {
        if (it.index === input.iterations) {
          await it.ctx.step("after", () => (hooks.afterSteps ? hooks.afterSteps(ctx.runId) : null));
          return it.done(total);
        }
        return it.ctx.step("s", () => total + 1);
      },
      { snapshotEvery: input.snapshotEvery },
    );
  },
});

/** Waits for the event "go", then runs one step: the wake-up and suspended-run workload. */
export const wakeOnEvent = defineWorkflow({
  name: "bench-wake",
  version: "1",
  async run(ctx) {
    await ctx.waitForEvent("go");
    await ctx.step("woken", () => {
      hooks.stepEntered?.(ctx.runId);
      return null;
    });
    return 1;
  },
});

/** What each bench-storage step returns: the payload a journaled step carries. */
export const STORAGE_RESULT = "x".repeat(100);

/** `input.steps` steps that each return STORAGE_RESULT: the storage workload. */
export const storageSteps = defineWorkflow({
  name: "bench-storage",
  version: "1",
  async run(ctx, input) {
    for (let i = 0; i < input.steps; i++) await ctx.step("s", () => STORAGE_RESULT);
    return input.steps;
  },
});

export const workflows = [tenSteps, noopSteps, resumeSteps, wakeOnEvent, storageSteps];

/** What the resume bench's processes register: the workflows above and bench-loop (kept out of them so the other cases' workers claim as before). */
export const resumeWorkflows = [...workflows, loopSteps];
