/**
 * Property: for random workflow shapes, a run interrupted at a random point and resumed
 * by another worker ends with the same output as an uninterrupted run, and no step
 * attempt ever runs twice.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { sharedEngines, STORE_KINDS, type StoreKind } from "../../test/support/engines.js";
import { waitFor } from "../testing/wait-for.js";
import { defineWorkflow } from "./define-workflow.js";
import type { WorkflowContext } from "./workflow.js";

type Op =
  | { t: "step"; name: string; ms: number }
  | { t: "par"; names: string[]; ms: number }
  | { t: "sleep"; ms: number }
  | { t: "event" }
  | { t: "value" }
  | { t: "flaky"; name: string };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ t: fc.constant("step" as const), name: fc.constantFrom("a", "b", "c"), ms: fc.integer({ min: 0, max: 3 }) }),
  fc.record({
    t: fc.constant("par" as const),
    names: fc.array(fc.constantFrom("p", "q", "a"), { minLength: 2, maxLength: 4 }),
    ms: fc.integer({ min: 0, max: 3 }),
  }),
  fc.record({ t: fc.constant("sleep" as const), ms: fc.integer({ min: 0, max: 15 }) }),
  fc.record({ t: fc.constant("event" as const) }),
  fc.record({ t: fc.constant("value" as const) }),
  fc.record({ t: fc.constant("flaky" as const), name: fc.constantFrom("f", "g") }),
);

const shapeArb = fc.record({ ops: fc.array(opArb, { minLength: 1, maxLength: 7 }), crashAfter: fc.integer({ min: 2, max: 30 }) });

/** Counts executions by "runId:opKey attempt", outside the engine's storage. */
type Ledger = Map<string, number>;

function interpreter(ops: Op[], ledger: Ledger) {
  const effect = async (info: { idempotencyKey: string; attempt: number }, ms: number, value: unknown) => {
    if (ms > 0) await new Promise((resolve) => setTimeout(resolve, ms));
    const key = `${info.idempotencyKey} ${info.attempt}`;
    ledger.set(key, (ledger.get(key) ?? 0) + 1);
    return value;
  };
  return async (ctx: WorkflowContext) => {
    const out: unknown[] = [];
    for (const [i, op] of ops.entries()) {
      switch (op.t) {
        case "step":
          out.push(await ctx.step(op.name, (info) => effect(info, op.ms, `${op.name}${i}`)));
          break;
        case "par":
          out.push(await Promise.all(op.names.map((name, j) => ctx.step(name, (info) => effect(info, (op.ms + j) % 4, `${name}${i}.${j}`)))));
          break;
        case "sleep":
          await ctx.sleep("nap", op.ms);
          out.push("slept");
          break;
        case "event":
          out.push(await ctx.waitForEvent("e"));
          break;
        case "value":
          out.push(ctx.random() < 1 && ctx.uuid().length);
          break;
        case "flaky":
          out.push(
            await ctx.step(
              op.name,
              (info) => {
                if (info.attempt === 1) throw new Error("first attempt fails");
                return effect(info, 0, `${op.name}${i}`);
              },
              { retry: { maxAttempts: 3, initialDelay: 1 } },
            ),
          );
          break;
      }
    }
    return out;
  };
}

async function runShape(kind: StoreKind, ops: Op[], crashAfter: number | null) {
  const ledger: Ledger = new Map();
  const wf = defineWorkflow({ name: "shape", run: interpreter(ops, ledger) });
  const [one, two] = await sharedEngines(kind, [wf], [wf]);
  const runId = "shape-run";
  await one!.start(wf, undefined, { runId });
  const events = ops.filter((op) => op.t === "event").length;
  for (let i = 0; i < events; i++) await one!.sendEvent(runId, "e", `event-${i}`, { eventId: `e${i}` });
  const first = one!.startWorker({ pollInterval: 5 });
  if (crashAfter !== null) {
    await waitFor(async () => {
      const run = await one!.getRun(runId);
      return run.status === "completed" || run.entries >= crashAfter;
    });
    await first.stop({ drain: false });
    two!.startWorker({ pollInterval: 5 });
  }
  const output = await two!.result(runId, { timeoutMs: 10_000 });
  await two!.close();
  await one!.close().catch(() => undefined);
  for (const [key, count] of ledger) expect(count, `${key} ran once per attempt`).toBe(1);
  return output;
}

describe.each(STORE_KINDS)("replay property on %s", (kind) => {
  it("an interrupted run ends with the same output as an uninterrupted one", async () => {
    await fc.assert(
      fc.asyncProperty(shapeArb, async ({ ops, crashAfter }) => {
        const reference = await runShape(kind, ops, null);
        const interrupted = await runShape(kind, ops, crashAfter);
        expect(interrupted).toEqual(reference);
      }),
      // Each PostgreSQL engine migrates a fresh schema: fewer shapes there, and room for them.
      { numRuns: kind === "memory" ? 40 : kind === "sqlite" ? 15 : 6 },
    );
  }, 150_000);
});
