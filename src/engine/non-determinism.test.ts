import { describe, expect, it } from "vitest";
import { sharedEngines, STORE_KINDS } from "../../test/support/engines.js";
import { waitFor } from "../testing/wait-for.js";
import { defineWorkflow } from "./define-workflow.js";
import type { WorkflowContext } from "./workflow.js";

const fast = { pollInterval: 10 };

/** The code a run started on: two steps, then a wait that suspends it. */
async function original(ctx: WorkflowContext) {
  await ctx.step("a", () => 1);
  await ctx.step("b", () => 2);
  await ctx.waitForEvent("go");
  return "done";
}

const effects = { x: 0 };

const changes: [string, (ctx: WorkflowContext) => Promise<string>, RegExp][] = [
  [
    "renamed",
    async (ctx) => {
      await ctx.step("a", () => 1);
      await ctx.step("b2", () => 2);
      await ctx.waitForEvent("go");
      return "done";
    },
    /op "b#0": the journal has step.completed at seq \d+, but the code now issues "b2#0" instead/,
  ],
  [
    "inserted",
    async (ctx) => {
      await ctx.step("a", () => 1);
      await ctx.step("x", () => ((effects.x += 1), 9));
      await ctx.step("b", () => 2);
      await ctx.waitForEvent("go");
      return "done";
    },
    /op "b#0": the journal has step.completed .* issues "x#0" instead/,
  ],
  [
    "reordered",
    async (ctx) => {
      await ctx.step("b", () => 2);
      await ctx.step("a", () => 1);
      await ctx.waitForEvent("go");
      return "done";
    },
    /op "a#0": the journal has step.completed/,
  ],
  [
    "retyped",
    async (ctx) => {
      await ctx.step("a", () => 1);
      await ctx.sleep("b", 10);
      await ctx.waitForEvent("go");
      return "done";
    },
    /op "b#0": the journal has a step \(step.started at seq \d+\), but the code now issues a sleep/,
  ],
  [
    "removed",
    async (ctx) => {
      await ctx.step("a", () => 1);
      await ctx.waitForEvent("go");
      return "done";
    },
    /op "b#0": the journal has step.completed/,
  ],
];

describe.each(STORE_KINDS)("non-determinism on %s", (kind) => {
  it.each(changes)("a %s op fails the run with NonDeterminismError naming it", async (_name, changed, message) => {
    effects.x = 0;
    const before = defineWorkflow({ name: "changing", version: "1", run: original });
    const after = defineWorkflow({
      name: "changing",
      version: "1",
      run: changed,
    });
    const [oldEngine, newEngine] = await sharedEngines(kind, [before], [after]);
    const oldWorker = oldEngine!.startWorker(fast);
    await oldEngine!.start(before, undefined, { runId: "nd" });
    await waitFor(async () => (await oldEngine!.getRun("nd")).status === "suspended");
    await oldWorker.stop({ drain: true });

    newEngine!.startWorker(fast);
    await newEngine!.sendEvent("nd", "go", null, { eventId: "go" });
    const failed = await waitFor(async () => {
      const run = await newEngine!.getRun("nd");
      return run.status === "failed" && run;
    });
    expect(failed.error?.code).toBe("NON_DETERMINISM");
    expect(failed.error?.message).toMatch(message);
    // The inserted step's effect never ran: divergence is caught before new effects.
    expect(effects.x).toBe(0);
    const journal = await newEngine!.journal("nd");
    expect(journal.filter((e) => e.kind === "run.failed")).toHaveLength(1);
    expect(journal.filter((e) => e.kind === "step.started" && e.opKey !== "a#0" && e.opKey !== "b#0")).toHaveLength(0);
  });
});
