/**
 * Property: a loop resumes exactly whatever the size of its state, its step results, its events and
 * its result, on either side of the payload inline limit, with and without payload encryption. Each
 * iteration waits for an event, so each one starts with a resume from the newest snapshot; the loop's
 * result is read back from its (possibly offloaded) `loop.completed` on the resume after it.
 *
 * Every loop test before this one kept its state small, and no loop test ran with a codec, so the
 * offloaded (and sealed) checkpoint was never resumed from.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { testEngine } from "../../test/support/engines.js";
import { aesGcmCodec } from "../store/payloads/aes-gcm-codec.js";
import { waitFor } from "../testing/wait-for.js";
import { defineWorkflow } from "./define-workflow.js";
import type { Engine } from "./engine.js";

const KEY = Buffer.alloc(32, 3).toString("base64");

interface Shape {
  limit: number;
  encrypted: boolean;
  snapshotEvery: number;
  /** Per iteration: the step result's size, the event's padding, and how many earlier items the state keeps. */
  iterations: { result: number; pad: number; keep: number }[];
}

const shapeArb: fc.Arbitrary<Shape> = fc.integer({ min: 256, max: 2048 }).chain((limit) =>
  fc.record({
    limit: fc.constant(limit),
    encrypted: fc.boolean(),
    snapshotEvery: fc.integer({ min: 1, max: 3 }),
    iterations: fc.array(
      fc.record({
        // Around the limit: below it, across it, far past it.
        result: fc.oneof(fc.integer({ min: 0, max: 64 }), fc.integer({ min: limit - 64, max: limit + 64 }), fc.integer({ min: limit, max: limit * 3 })),
        pad: fc.oneof(fc.constant(0), fc.integer({ min: limit - 32, max: limit + 32 })),
        keep: fc.integer({ min: 0, max: 4 }),
      }),
      { minLength: 1, maxLength: 6 },
    ),
  }),
);

/** What the loop computes, without the engine. */
function expected(shape: Shape) {
  let items: string[] = [];
  for (const [i, step] of shape.iterations.entries())
    items = [...items.slice(items.length - step.keep), `${i}:${"r".repeat(step.result)}|${"e".repeat(step.pad)}`];
  return { items, total: items.reduce((sum, item) => sum + item.length, 0) };
}

function workflowFor(shape: Shape) {
  return defineWorkflow({
    name: "sizes",
    version: "1",
    async run(ctx) {
      const result = await ctx.loop(
        "grow",
        { items: [] as string[] },
        async (state, it) => {
          const plan = shape.iterations[it.index]!;
          const event = await it.ctx.waitForEvent<{ pad: string }>("go");
          const made = await it.ctx.step("make", () => `${it.index}:${"r".repeat(plan.result)}`);
          const items = [...state.items.slice(state.items.length - plan.keep), `${made}|${event.pad}`];
          return it.index === shape.iterations.length - 1 ? it.done({ items, total: items.reduce((sum, item) => sum + item.length, 0) }) : { items };
        },
        { snapshotEvery: shape.snapshotEvery },
      );
      // One more resume after the loop: its result comes back from the loop.completed entry.
      await ctx.waitForEvent("end");
      return result;
    },
  });
}

async function waitSuspendedOn(engine: Engine, runId: string, opKey: string): Promise<void> {
  await waitFor(
    async () => {
      const run = await engine.getRun(runId);
      if (run.status === "failed" || run.status === "dead") throw new Error(`${run.error?.code}: ${run.error?.message}`);
      return run.status === "suspended" && run.waitingFor.some((wait) => wait.opKey === opKey);
    },
    { timeoutMs: 10_000, intervalMs: 2, what: `the run to wait at ${opKey}` },
  );
}

describe("loop state sizes around the inline limit", () => {
  it("resumes exactly at every iteration (property)", async () => {
    await fc.assert(
      fc.asyncProperty(shapeArb, async (shape) => {
        const workflow = workflowFor(shape);
        const codec = shape.encrypted ? aesGcmCodec({ keys: { k: KEY }, currentKeyId: "k" }) : null;
        const engine = await testEngine("memory", { workflows: [workflow], payloads: { inlineLimit: shape.limit, codec } });
        const worker = engine.startWorker({ pollInterval: 5 });
        try {
          await engine.start(workflow, undefined, { runId: "s" });
          for (const [i, step] of shape.iterations.entries()) {
            await waitSuspendedOn(engine, "s", `grow#0/${i}/go#0`);
            await engine.sendEvent("s", "go", { pad: "e".repeat(step.pad) }, { eventId: `go-${i}` });
          }
          await waitSuspendedOn(engine, "s", "end#0");
          await engine.sendEvent("s", "end", {}, { eventId: "end" });
          expect(await engine.result("s", { timeoutMs: 10_000 })).toEqual(expected(shape));
        } finally {
          await worker.stop();
          await engine.close();
        }
      }),
      { numRuns: 30 },
    );
  });
});
