/**
 * Resources and compensations inside ctx.loop iterations, on SQLite and PostgreSQL: a resource is
 * released when its iteration ends; compensations registered in iterations run newest first when
 * the run fails or is cancelled, including those of iterations a loop snapshot replaced and after a
 * resume from that snapshot. (The SIGKILL crash tests are in test/loop-saga-crash.test.ts.)
 */
import { describe, expect, it } from "vitest";
import { onCleanup } from "../../test/support/engines.js";
import { DURABLE_STORES, durableStoreUrl, postgresReachable, type DurableStore } from "../../test/support/store-urls.js";
import { isCairnError } from "../core/errors.js";
import { waitFor } from "../testing/wait-for.js";
import { createEngine } from "./create-engine.js";
import { defineWorkflow } from "./define-workflow.js";
import type { Engine } from "./engine.js";
import { silentLogger } from "./logger.js";
import type { Workflow } from "./workflow.js";

const pgUp = await postgresReachable();
const fast = { pollInterval: 10 };

async function engineOn(kind: DurableStore, workflows: Workflow<any, any>[], url = durableStoreUrl(kind)): Promise<Engine> {
  const engine = await createEngine({ store: url, workflows, logger: silentLogger });
  onCleanup(() => engine.close());
  return engine;
}

async function settle(engine: Engine, runId: string): Promise<unknown> {
  return engine.result(runId, { timeoutMs: 20_000 }).then(
    () => "completed",
    (error: unknown) => (isCairnError(error) ? error.code : error),
  );
}

/** Four iterations, each acquiring a sandbox and booking a leg; then `mode` decides. */
function legs(name: string, log: string[]) {
  return defineWorkflow({
    name,
    async run(ctx, input: { mode: "fail" | "wait" | "ok"; compensateFrom?: number }) {
      const total = await ctx.loop(
        "legs",
        0,
        async (booked: number, it) => {
          const sandbox = await it.ctx.acquire("sandbox", {
            acquire: () => (log.push(`acquire ${it.index}`), `sb-${it.index}`),
            release: (id) => void log.push(`release ${id}`),
          });
          const undo = it.index >= (input.compensateFrom ?? 0) ? { compensate: (leg: string | undefined) => void log.push(`undo ${String(leg)}`) } : {};
          await it.ctx.step("book", () => (log.push(`book ${it.index} in ${sandbox.value}`), `leg-${it.index}`), undo);
          return it.index === 3 ? it.done(booked + 1) : booked + 1;
        },
        { snapshotEvery: 2 },
      );
      if (input.mode === "fail") await ctx.step("pay", () => Promise.reject(Object.assign(new Error("card declined"), { nonRetryable: true })));
      if (input.mode === "wait") await ctx.waitForEvent("confirm");
      return total;
    },
  });
}

describe.each(DURABLE_STORES)("resources and compensations in loops on %s", (kind) => {
  const test = kind === "postgres" && !pgUp ? it.skip : it;

  test("a resource acquired in an iteration is released when the iteration ends", async () => {
    const log: string[] = [];
    const engine = await engineOn(kind, [legs("loop-ok", log)]);
    const worker = engine.startWorker(fast);
    onCleanup(() => worker.stop());
    await engine.start("loop-ok", { mode: "ok" }, { runId: "ok" });
    expect(await settle(engine, "ok")).toBe("completed");
    expect(log.filter((l) => !l.startsWith("undo"))).toEqual([
      "acquire 0",
      "book 0 in sb-0",
      "release sb-0",
      "acquire 1",
      "book 1 in sb-1",
      "release sb-1",
      "acquire 2",
      "book 2 in sb-2",
      "release sb-2",
      "acquire 3",
      "book 3 in sb-3",
      "release sb-3",
    ]);
    expect(log.some((l) => l.startsWith("undo"))).toBe(false);
  });

  test("a failure after the loop undoes every iteration's booking, newest first, once", async () => {
    const log: string[] = [];
    const engine = await engineOn(kind, [legs("loop-fail", log)]);
    const worker = engine.startWorker(fast);
    onCleanup(() => worker.stop());
    await engine.start("loop-fail", { mode: "fail" }, { runId: "fail" });
    expect(await settle(engine, "fail")).not.toBe("completed");
    await waitFor(async () => (await engine.getRun("fail")).status === "compensated", { timeoutMs: 20_000, what: "compensated" });
    expect(log.filter((l) => l.startsWith("undo"))).toEqual(["undo leg-3", "undo leg-2", "undo leg-1", "undo leg-0"]);
  });

  test.each([
    ["every iteration", 0, ["undo leg-3", "undo leg-2", "undo leg-1", "undo leg-0"], false],
    ["the iterations after a snapshot", 2, ["undo leg-3", "undo leg-2"], true],
  ])("a cancel in a fresh engine undoes the bookings of a completed loop's iterations: %s", async (_what, compensateFrom, undone, snapshot) => {
    const log: string[] = [];
    const url = durableStoreUrl(kind);
    const first = await engineOn(kind, [legs("loop-wait", log)], url);
    const worker = first.startWorker(fast);
    await first.start("loop-wait", { mode: "wait", compensateFrom }, { runId: "wait" });
    await waitFor(async () => (await first.getRun("wait")).status === "suspended", { timeoutMs: 20_000, what: "suspended" });
    await worker.stop();
    // Another engine (a fresh process's view): nothing of the loop is in memory.
    const second = await engineOn(kind, [legs("loop-wait", log)], url);
    const journal = await second.journal("wait");
    // No checkpoint covers an iteration that registered a compensation: a resume replays those iterations.
    expect(journal.some((e) => e.kind === "loop.snapshot")).toBe(snapshot);
    const booked = log.filter((l) => l.startsWith("book")).length;
    const again = second.startWorker(fast);
    onCleanup(() => again.stop());
    await second.cancel("wait", "called off");
    await waitFor(async () => (await second.getRun("wait")).status === "compensated", { timeoutMs: 20_000, what: "compensated" });
    expect(log.filter((l) => l.startsWith("undo"))).toEqual(undone);
    expect(log.filter((l) => l.startsWith("book")).length, "replay booked nothing again").toBe(booked);
    expect(log.filter((l) => l.startsWith("acquire")).length, "replay acquired nothing again").toBe(4);
  });
});
