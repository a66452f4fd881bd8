/**
 * Sagas and resources on real stores (SQLite and PostgreSQL): compensations in reverse order after
 * a terminal failure, a cancel (running and suspended) and ctx.compensate(); a failing compensation;
 * retry; resources released exactly once at every terminal state; replay never re-runs a cleanup.
 */
import { describe, expect, it } from "vitest";
import { deferred, onCleanup } from "../../test/support/engines.js";
import { DURABLE_STORES, durableStoreUrl, postgresReachable, type DurableStore } from "../../test/support/store-urls.js";
import { isCairnError } from "../core/errors.js";
import { waitFor } from "../testing/wait-for.js";
import { createEngine } from "./create-engine.js";
import { defineWorkflow } from "./define-workflow.js";
import type { Engine, JournalEntryView } from "./engine.js";
import { silentLogger } from "./logger.js";
import type { Workflow, WorkflowContext } from "./workflow.js";

const pgUp = await postgresReachable();
const fast = { pollInterval: 10 };
const quickRetry = { maxAttempts: 3, initialDelay: 1, maxDelay: 2 };

async function engineOn(kind: DurableStore, workflows: Workflow<any, any>[], url = durableStoreUrl(kind)): Promise<Engine> {
  const engine = await createEngine({ store: url, workflows, logger: silentLogger });
  onCleanup(() => engine.close());
  return engine;
}

/** Three compensable bookings, then `then` decides how the run goes on. */
function trip(name: string, log: string[], then: (ctx: WorkflowContext) => Promise<unknown>, failUndo?: () => boolean) {
  return defineWorkflow({
    name,
    async run(ctx) {
      for (const what of ["flight", "hotel", "car"]) {
        await ctx.step(what, () => (log.push(`do ${what}`), `${what}-id`), {
          compensate: (id, info) => {
            if (what === "hotel" && failUndo?.()) throw new Error("hotel API down");
            log.push(`undo ${String(id)} ${info.idempotencyKey}`);
          },
          compensateRetry: quickRetry,
        });
      }
      await ctx.step("note", () => log.push("note")); // no compensate: never undone
      return then(ctx);
    },
  });
}

function kinds(journal: JournalEntryView[], prefix: string): string[] {
  return journal.filter((e) => e.kind.startsWith(prefix)).map((e) => `${e.kind} ${e.opKey ?? ""}`.trim());
}

async function settle(engine: Engine, runId: string): Promise<unknown> {
  return engine.result(runId, { timeoutMs: 20_000 }).then(
    () => "completed",
    (error: unknown) => (isCairnError(error) ? error.code : error),
  );
}

describe.each(DURABLE_STORES)("sagas on %s", (kind) => {
  const test = kind === "postgres" && !pgUp ? it.skip : it;

  test("a terminal failure runs the registered compensations in reverse order, once each, and ends compensated", async () => {
    const log: string[] = [];
    const wf = trip("fail-trip", log, async (ctx) => ctx.step("pay", () => Promise.reject(Object.assign(new Error("card declined"), { nonRetryable: true }))));
    const engine = await engineOn(kind, [wf]);
    engine.startWorker(fast);
    await engine.start(wf, {}, { runId: "t1" });
    expect(await settle(engine, "t1")).toBe("RUN_COMPENSATED");
    expect(log).toEqual([
      "do flight",
      "do hotel",
      "do car",
      "note",
      "undo car-id t1:car#0:compensate",
      "undo hotel-id t1:hotel#0:compensate",
      "undo flight-id t1:flight#0:compensate",
    ]);
    const run = await engine.getRun("t1");
    expect(run.status).toBe("compensated");
    expect(run.error).toMatchObject({ message: expect.stringContaining("card declined") });
    const journal = await engine.journal("t1");
    expect(kinds(journal, "compensation.")).toEqual([
      "compensation.started car#0",
      "compensation.completed car#0",
      "compensation.started hotel#0",
      "compensation.completed hotel#0",
      "compensation.started flight#0",
      "compensation.completed flight#0",
    ]);
    expect(journal.find((e) => e.kind === "saga.compensating")?.data).toMatchObject({ reason: "failed" });
    expect(journal.at(-1)?.kind).toBe("run.compensated");
    expect(journal.some((e) => e.kind === "run.failed")).toBe(false);
  });

  test("ctx.compensate() unwinds what was registered so far and ends the run compensated; code after it never runs", async () => {
    const log: string[] = [];
    const wf = trip("requested-trip", log, async (ctx) => {
      await ctx.compensate("fraud suspected");
      log.push("after compensate");
    });
    const engine = await engineOn(kind, [wf]);
    engine.startWorker(fast);
    await engine.start(wf, {}, { runId: "t2" });
    expect(await settle(engine, "t2")).toBe("RUN_COMPENSATED");
    expect(log.filter((l) => l.startsWith("undo"))).toEqual([
      "undo car-id t2:car#0:compensate",
      "undo hotel-id t2:hotel#0:compensate",
      "undo flight-id t2:flight#0:compensate",
    ]);
    expect(log).not.toContain("after compensate");
    const journal = await engine.journal("t2");
    expect(journal.find((e) => e.kind === "saga.compensating")?.data).toMatchObject({ reason: "requested", error: { message: "fraud suspected" } });
  });

  test("cancelling a suspended run hands it to a worker that compensates in reverse order", async () => {
    const log: string[] = [];
    const wf = trip("waiting-trip", log, (ctx) => ctx.waitForEvent("confirm"));
    const engine = await engineOn(kind, [wf]);
    const worker = engine.startWorker(fast);
    await engine.start(wf, {}, { runId: "t3" });
    await waitFor(async () => (await engine.getRun("t3")).status === "suspended", { timeoutMs: 10_000, what: "t3 suspended" });
    await engine.cancel("t3", "customer changed their mind");
    expect(await settle(engine, "t3")).toBe("RUN_COMPENSATED");
    expect(log.filter((l) => l.startsWith("undo"))).toEqual([
      "undo car-id t3:car#0:compensate",
      "undo hotel-id t3:hotel#0:compensate",
      "undo flight-id t3:flight#0:compensate",
    ]);
    expect(log.filter((l) => l.startsWith("do"))).toHaveLength(3); // replay ran no step again
    const journal = await engine.journal("t3");
    const order = journal.map((e) => e.kind).filter((k) => ["run.cancelling", "saga.compensating", "run.compensated"].includes(k));
    expect(order).toEqual(["run.cancelling", "saga.compensating", "run.compensated"]);
    expect(journal.find((e) => e.kind === "saga.compensating")?.data).toMatchObject({
      reason: "cancelled",
      error: { message: "Cancelled: customer changed their mind" },
    });
    await worker.stop();
  });

  test("cancelling a running run also compensates the step cut short: its effect may have happened", async () => {
    const log: string[] = [];
    const entered = deferred();
    const wf = trip("running-trip", log, (ctx) =>
      ctx.step(
        "slow",
        ({ signal }) =>
          new Promise((_, reject) => {
            entered.resolve();
            signal.addEventListener("abort", () => reject(new Error("aborted")));
          }),
        { compensate: (value, info) => void log.push(`undo slow ${String(value)} ${info.idempotencyKey}`) },
      ),
    );
    const engine = await engineOn(kind, [wf]);
    engine.startWorker(fast);
    await engine.start(wf, {}, { runId: "t4" });
    await entered.promise;
    await engine.cancel("t4");
    expect(await settle(engine, "t4")).toBe("RUN_COMPENSATED");
    // No outcome was journaled for "slow" (the cancel fenced it out): its compensation is called with undefined, first.
    expect(log.filter((l) => l.startsWith("undo"))).toEqual([
      "undo slow undefined t4:slow#0:compensate",
      "undo car-id t4:car#0:compensate",
      "undo hotel-id t4:hotel#0:compensate",
      "undo flight-id t4:flight#0:compensate",
    ]);
    const journal = await engine.journal("t4");
    expect(journal.filter((e) => e.opKey === "slow#0").map((e) => e.kind)).toEqual(["step.started", "compensation.started", "compensation.completed"]);
    expect(journal.find((e) => e.kind === "step.started" && e.opKey === "slow#0")?.data).toMatchObject({ compensable: true });
  });

  test("a step cut short by a cancel is compensated with what its reconcile finds, and not at all when it finds nothing", async () => {
    const log: string[] = [];
    const happened = new Map<string, string>();
    const both = deferred();
    let started = 0;
    const inFlight =
      (name: string, effect: boolean) =>
      ({ idempotencyKey, signal }: { idempotencyKey: string; signal: AbortSignal }) =>
        new Promise((_, reject) => {
          if (effect) happened.set(idempotencyKey, `${name}-id`); // the effect happens; its outcome never reaches the journal
          if (++started === 2) both.resolve();
          signal.addEventListener("abort", () => reject(new Error("aborted")));
        });
    const options = (name: string) => ({
      compensate: (value: unknown) => void log.push(`undo ${name} ${String(value)}`),
      reconcile: (key: string) => (happened.has(key) ? { done: true as const, value: happened.get(key) } : { done: false as const }),
    });
    const wf = trip("reconciled-trip", log, (ctx) =>
      Promise.all([ctx.step("seat", inFlight("seat", true), options("seat")), ctx.step("meal", inFlight("meal", false), options("meal"))]),
    );
    const engine = await engineOn(kind, [wf]);
    engine.startWorker(fast);
    await engine.start(wf, {}, { runId: "t6" });
    await both.promise;
    await engine.cancel("t6");
    expect(await settle(engine, "t6")).toBe("RUN_COMPENSATED");
    expect(log.filter((l) => l.startsWith("undo"))).toEqual([
      "undo seat seat-id",
      "undo car-id t6:car#0:compensate",
      "undo hotel-id t6:hotel#0:compensate",
      "undo flight-id t6:flight#0:compensate",
    ]);
    const journal = await engine.journal("t6");
    expect(journal.some((e) => e.opKey === "meal#0" && e.kind.startsWith("compensation."))).toBe(false);
  });

  test("cancelling a run whose only compensable step is in flight goes through a worker that compensates it", async () => {
    const log: string[] = [];
    const entered = deferred();
    const wf = defineWorkflow({
      name: "first-step-running",
      run: (ctx) =>
        ctx.step(
          "charge",
          ({ signal }) =>
            new Promise((_, reject) => {
              log.push("charged");
              entered.resolve();
              signal.addEventListener("abort", () => reject(new Error("aborted")));
            }),
          { compensate: () => void log.push("refund") },
        ),
    });
    const engine = await engineOn(kind, [wf]);
    engine.startWorker(fast);
    await engine.start(wf, {}, { runId: "t7" });
    await entered.promise;
    expect((await engine.cancel("t7", "stop")).status).toBe("pending");
    expect(await settle(engine, "t7")).toBe("RUN_COMPENSATED");
    expect(log).toEqual(["charged", "refund"]);
  });

  test("a run without compensations or resources is still cancelled at once, as before", async () => {
    const wf = defineWorkflow({ name: "plain", run: (ctx) => ctx.waitForEvent("x") });
    const engine = await engineOn(kind, [wf]);
    engine.startWorker(fast);
    await engine.start(wf, {}, { runId: "p1" });
    await waitFor(async () => (await engine.getRun("p1")).status === "suspended", { timeoutMs: 10_000, what: "p1 suspended" });
    expect((await engine.cancel("p1")).status).toBe("cancelled");
    expect((await engine.journal("p1")).some((e) => e.kind === "run.cancelling")).toBe(false);
  });

  test("a compensation that keeps failing ends the run compensation_failed, naming it with its attempts; retry finishes the unwinding", async () => {
    const log: string[] = [];
    let broken = true;
    const wf = trip(
      "broken-trip",
      log,
      async (ctx) => ctx.step("pay", () => Promise.reject(Object.assign(new Error("declined"), { nonRetryable: true }))),
      () => broken,
    );
    const engine = await engineOn(kind, [wf]);
    engine.startWorker(fast);
    await engine.start(wf, {}, { runId: "t5" });
    expect(await settle(engine, "t5")).toBe("COMPENSATION_FAILED");
    const run = await engine.getRun("t5");
    expect(run.status).toBe("compensation_failed");
    expect(run.error).toMatchObject({ code: "COMPENSATION_FAILED", opKey: "hotel#0", message: expect.stringContaining('"hotel#0" failed after 3 attempts') });
    await expect(engine.result("t5")).rejects.toThrow(/hotel API down/);
    let journal = await engine.journal("t5");
    expect(journal.filter((e) => e.kind === "compensation.failed").map((e) => [e.opKey, (e.data as { attempt: number; final: boolean }).final])).toEqual([
      ["hotel#0", false],
      ["hotel#0", false],
      ["hotel#0", true],
    ]);
    expect(log.filter((l) => l.startsWith("undo"))).toEqual(["undo car-id t5:car#0:compensate"]); // flight not reached
    broken = false;
    expect((await engine.retry("t5")).status).toBe("pending");
    expect(await settle(engine, "t5")).toBe("RUN_COMPENSATED");
    // The car's compensation is journaled as done: replay never runs it again.
    expect(log.filter((l) => l.startsWith("undo"))).toEqual([
      "undo car-id t5:car#0:compensate",
      "undo hotel-id t5:hotel#0:compensate",
      "undo flight-id t5:flight#0:compensate",
    ]);
    journal = await engine.journal("t5");
    expect(journal.at(-1)?.kind).toBe("run.compensated");
    expect(log.filter((l) => l.startsWith("do"))).toHaveLength(3);
  });

  test("a parent waiting on a child that ends compensated sees a failure", async () => {
    const log: string[] = [];
    const child = trip("child-trip", log, (ctx) => ctx.compensate());
    const parent = defineWorkflow({
      name: "parent",
      async run(ctx) {
        try {
          await ctx.child(child, {});
          return "child succeeded";
        } catch (error) {
          return `child failed: ${(error as Error).name}`;
        }
      },
    });
    const engine = await engineOn(kind, [parent, child]);
    engine.startWorker(fast);
    await engine.start(parent, {}, { runId: "par" });
    expect(await engine.result("par", { timeoutMs: 20_000 })).toBe("child failed: RunFailedError");
    expect((await engine.getRun("par/child-trip#0")).status).toBe("compensated");
  });

  test("non-determinism is still caught on a saga's replay, and no compensation runs on code that changed", async () => {
    const log: string[] = [];
    const v1 = trip("changing", log, (ctx) => ctx.waitForEvent("go"));
    const url = durableStoreUrl(kind);
    const first = await engineOn(kind, [v1], url);
    const worker = first.startWorker(fast);
    await first.start(v1, {}, { runId: "nd" });
    await waitFor(async () => (await first.getRun("nd")).status === "suspended", { timeoutMs: 10_000, what: "nd suspended" });
    await worker.stop();
    await first.close();
    const v2 = defineWorkflow({ name: "changing", run: (ctx) => ctx.sleep("flight", 1) });
    const second = await engineOn(kind, [v2], url);
    second.startWorker(fast);
    await second.sendEvent("nd", "go", {}, { eventId: "go" });
    expect(await settle(second, "nd")).toBe("RUN_FAILED");
    expect((await second.getRun("nd")).error).toMatchObject({ code: "NON_DETERMINISM" });
    expect(log.filter((l) => l.startsWith("undo"))).toEqual([]);
  });
});

describe.each(DURABLE_STORES)("resources on %s", (kind) => {
  const test = kind === "postgres" && !pgUp ? it.skip : it;

  function pool(log: string[]) {
    return {
      acquire: ({ idempotencyKey }: { idempotencyKey: string }) => (log.push(`acquire ${idempotencyKey}`), { conn: idempotencyKey }),
      release: (value: { conn: string }, info: { idempotencyKey: string }) => void log.push(`release ${value.conn} ${info.idempotencyKey}`),
    };
  }

  test("a resource still held when the run completes is released by the engine, once", async () => {
    const log: string[] = [];
    const wf = defineWorkflow({
      name: "holds",
      async run(ctx) {
        const db = await ctx.acquire("db", pool(log));
        return ctx.step("use", () => `used ${db.value.conn}`);
      },
    });
    const engine = await engineOn(kind, [wf]);
    engine.startWorker(fast);
    await engine.start(wf, {}, { runId: "r1" });
    expect(await engine.result("r1", { timeoutMs: 20_000 })).toBe("used r1:acquire:db#0");
    expect(log).toEqual(["acquire r1:acquire:db#0", "release r1:acquire:db#0 r1:acquire:db#0:release"]);
    const journal = await engine.journal("r1");
    expect(kinds(journal, "resource.")).toEqual(["resource.releasing acquire:db#0", "resource.released acquire:db#0"]);
    expect(journal.find((e) => e.kind === "resource.released")?.data).toMatchObject({ by: "engine" });
    expect(journal.at(-1)?.kind).toBe("run.completed");
  });

  test("release() by the workflow is journaled and never repeated: not on replay, not by the engine", async () => {
    const log: string[] = [];
    const wf = defineWorkflow({
      name: "gives-back",
      async run(ctx) {
        const db = await ctx.acquire("db", pool(log));
        await db.release();
        await db.release(); // a no-op
        await ctx.waitForEvent("go"); // suspends: the resume replays acquire and release
        await db.release();
        return "ok";
      },
    });
    const engine = await engineOn(kind, [wf]);
    engine.startWorker(fast);
    await engine.start(wf, {}, { runId: "r2" });
    await waitFor(async () => (await engine.getRun("r2")).status === "suspended", { timeoutMs: 10_000, what: "r2 suspended" });
    await engine.sendEvent("r2", "go", {}, { eventId: "go" });
    expect(await engine.result("r2", { timeoutMs: 20_000 })).toBe("ok");
    expect(log).toEqual(["acquire r2:acquire:db#0", "release r2:acquire:db#0 r2:acquire:db#0:release"]);
    const released = (await engine.journal("r2")).filter((e) => e.kind === "resource.released");
    expect(released.map((e) => e.data)).toEqual([{ attempt: 1, by: "workflow" }]);
  });

  test("resources are released after the compensations when a saga fails, and when a suspended run is cancelled", async () => {
    const log: string[] = [];
    const wf = defineWorkflow({
      name: "holds-and-fails",
      async run(ctx, input: { fail: boolean }) {
        await ctx.acquire("db", pool(log));
        await ctx.step("book", () => "b", { compensate: () => void log.push(`undo book ${ctx.runId}`) });
        if (input.fail) throw new Error("boom");
        return ctx.waitForEvent("never");
      },
    });
    const engine = await engineOn(kind, [wf]);
    engine.startWorker(fast);
    await engine.start(wf, { fail: true }, { runId: "r3" });
    expect(await settle(engine, "r3")).toBe("RUN_COMPENSATED");
    expect(log).toEqual(["acquire r3:acquire:db#0", "undo book r3", "release r3:acquire:db#0 r3:acquire:db#0:release"]);
    log.length = 0;
    await engine.start(wf, { fail: false }, { runId: "r4" });
    await waitFor(async () => (await engine.getRun("r4")).status === "suspended", { timeoutMs: 10_000, what: "r4 suspended" });
    await engine.cancel("r4");
    expect(await settle(engine, "r4")).toBe("RUN_COMPENSATED");
    expect(log).toEqual(["acquire r4:acquire:db#0", "undo book r4", "release r4:acquire:db#0 r4:acquire:db#0:release"]);
  });

  test("a run holding only a resource is cancelled through a worker, which releases it and ends it cancelled", async () => {
    const log: string[] = [];
    const wf = defineWorkflow({
      name: "only-holds",
      async run(ctx) {
        await ctx.acquire("db", pool(log));
        return ctx.waitForEvent("never");
      },
    });
    const engine = await engineOn(kind, [wf]);
    engine.startWorker(fast);
    await engine.start(wf, {}, { runId: "r5" });
    await waitFor(async () => (await engine.getRun("r5")).status === "suspended", { timeoutMs: 10_000, what: "r5 suspended" });
    expect((await engine.cancel("r5", "stop")).status).toBe("pending");
    expect(await settle(engine, "r5")).toBe("RUN_CANCELLED");
    expect(log).toEqual(["acquire r5:acquire:db#0", "release r5:acquire:db#0 r5:acquire:db#0:release"]);
    expect((await engine.journal("r5")).at(-1)).toMatchObject({ kind: "run.cancelled", data: { reason: "stop" } });
  });

  test("a run failing with NON_DETERMINISM releases what the replayed code can release and journals what it cannot", async () => {
    const log: string[] = [];
    const v1 = defineWorkflow({
      name: "changes-under-resources",
      async run(ctx) {
        await ctx.acquire("db", pool(log));
        await ctx.step("book", () => "b", { compensate: () => void log.push("undo book") });
        await ctx.acquire("lock", pool(log));
        return ctx.waitForEvent("go");
      },
    });
    const url = durableStoreUrl(kind);
    const first = await engineOn(kind, [v1], url);
    const worker = first.startWorker(fast);
    await first.start(v1, {}, { runId: "nd-r" });
    await waitFor(async () => (await first.getRun("nd-r")).status === "suspended", { timeoutMs: 10_000, what: "nd-r suspended" });
    await worker.stop();
    await first.close();
    // The new code still acquires "db" (so it has its release function) but issues a sleep where the journal has "book".
    const v2 = defineWorkflow({
      name: "changes-under-resources",
      async run(ctx) {
        await ctx.acquire("db", pool(log));
        await ctx.sleep("book", 1);
      },
    });
    const second = await engineOn(kind, [v2], url);
    second.startWorker(fast);
    await second.sendEvent("nd-r", "go", {}, { eventId: "go" });
    expect(await settle(second, "nd-r")).toBe("RUN_FAILED");
    expect((await second.getRun("nd-r")).error).toMatchObject({ code: "NON_DETERMINISM" });
    expect(log).toEqual(["acquire nd-r:acquire:db#0", "acquire nd-r:acquire:lock#0", "release nd-r:acquire:db#0 nd-r:acquire:db#0:release"]);
    const journal = await second.journal("nd-r");
    expect(kinds(journal, "resource.")).toEqual([
      "resource.release_failed acquire:lock#0",
      "resource.releasing acquire:db#0",
      "resource.released acquire:db#0",
    ]);
    expect(journal.find((e) => e.kind === "resource.release_failed")?.data).toMatchObject({
      final: true,
      by: "engine",
      error: { name: "ResourceNotReleasedError", message: expect.stringContaining('Resource "acquire:lock#0" is still held') },
    });
    expect(kinds(journal, "compensation.")).toEqual([]); // no compensation runs on code that changed
    expect(journal.at(-1)?.kind).toBe("run.failed");
  });

  test("bad input is refused with a typed error before anything is journaled", async () => {
    const wf = defineWorkflow({
      name: "bad-acquire",
      async run(ctx) {
        const errors: string[] = [];
        try {
          await ctx.acquire("db", {} as never);
        } catch (e) {
          errors.push((e as { code: string }).code);
        }
        try {
          await ctx.acquire("", { acquire: () => 1, release: () => undefined });
        } catch (e) {
          errors.push((e as { code: string }).code);
        }
        // Inside a loop iteration an acquisition is allowed (loop-saga.test.ts): the resource is the iteration's.
        errors.push(await ctx.loop("l", 0, async (_s, it) => it.done((await it.ctx.acquire("db", { acquire: () => "held", release: () => undefined })).value)));
        return errors;
      },
    });
    const engine = await engineOn(kind, [wf]);
    engine.startWorker(fast);
    await engine.start(wf, {}, { runId: "bad" });
    expect(await engine.result("bad", { timeoutMs: 20_000 })).toEqual(["INVALID_INPUT", "INVALID_INPUT", "held"]);
  });
});
