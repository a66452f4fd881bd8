/**
 * Schedules through the engine, on a store URL from the caller (SQLite, memory, PostgreSQL with the
 * caller's clock): overlap skip / buffer / allow, catch-up none / latest / all after a downtime, pause
 * and resume, redefinition, bad definitions. Time is a manual clock; the scheduler polls every 20 ms.
 */
import { describe, expect, it } from "vitest";
import { createEngine } from "../../src/engine/create-engine.js";
import { defineWorkflow } from "../../src/engine/define-workflow.js";
import type { Engine } from "../../src/engine/engine.js";
import { silentLogger } from "../../src/engine/logger.js";
import { defineSchedule, parseScheduleRunId, scheduleRunId, type ScheduleOptions } from "../../src/engine/schedule.js";
import { ManualClock } from "../../src/testing/manual-clock.js";
import { waitFor } from "../../src/testing/wait-for.js";
import { onCleanup } from "../support/engines.js";

const T = Date.UTC(2030, 0, 1);
const MIN = 60_000;

/** Finishes at once with what it was started with and when it was scheduled. */
const tick = defineWorkflow({
  name: "tick",
  version: "1",
  run: async (ctx, input: { n: number }) => ({ input, scheduledAt: parseScheduleRunId(ctx.runId)?.scheduledAt.toISOString() }),
});
/** Runs until sent "go". */
const held = defineWorkflow({
  name: "held",
  version: "1",
  run: async (ctx) => ctx.waitForEvent("go"),
});

export function scheduleEngineSpec(kind: string, storeUrl: () => Promise<string>): void {
  describe(`schedules on ${kind}`, () => {
    async function setUp(schedule: Omit<ScheduleOptions<unknown>, "name" | "cron"> & { cron?: string }) {
      const clock = new ManualClock(T);
      const url = await storeUrl();
      const engine: Engine = await createEngine({
        store: url,
        workflows: [tick, held],
        clock: clock.now,
        logger: silentLogger,
        scheduler: { pollMs: 20 },
        schedules: [defineSchedule({ name: "s", cron: "* * * * *", ...schedule })],
      });
      onCleanup(() => engine.close());
      const runIds = async () => (await engine.listRuns({ limit: 1000 })).runs.map((r) => r.runId).sort();
      const tickId = (minutes: number) => scheduleRunId("s", T + minutes * MIN);
      const waitRuns = (expected: string[], what: string) =>
        waitFor(async () => JSON.stringify(await runIds()) === JSON.stringify(expected), { what: `${what}: runs ${expected.join(", ")}` });
      return { clock, engine, url, runIds, tickId, waitRuns };
    }

    it("fires each tick once with the schedule's input; the tick time is in the run id; state is kept", async () => {
      const { clock, engine, tickId, waitRuns } = await setUp({ workflow: tick, input: { n: 7 }, overlap: "allow" });
      engine.startWorker({ pollInterval: 10 });
      clock.advance(MIN);
      await waitRuns([tickId(1)], "tick 1");
      expect(await engine.result(tickId(1), { timeoutMs: 10_000 })).toEqual({ input: { n: 7 }, scheduledAt: new Date(T + MIN).toISOString() });
      clock.advance(MIN);
      await waitRuns([tickId(1), tickId(2)], "tick 2");
      const info = await waitFor(async () => {
        const s = await engine.getSchedule("s");
        return s.firedCount === 2 && s;
      });
      expect(info).toMatchObject({
        status: "active",
        lastRunId: tickId(2),
        lastTickAt: new Date(T + 2 * MIN),
        nextTickAt: new Date(T + 3 * MIN),
        skippedCount: 0,
      });
    });

    it("overlap skip: a tick while the previous run is going is skipped and counted", async () => {
      const { clock, engine, tickId, waitRuns, runIds } = await setUp({ workflow: held, overlap: "skip" });
      engine.startWorker({ pollInterval: 10 });
      clock.advance(MIN);
      await waitRuns([tickId(1)], "tick 1 started");
      clock.advance(MIN);
      await waitFor(async () => (await engine.getSchedule("s")).skippedCount === 1, { what: "tick 2 skipped" });
      expect(await runIds()).toEqual([tickId(1)]);
      await engine.sendEvent(tickId(1), "go", "done");
      await engine.result(tickId(1), { timeoutMs: 10_000 });
      clock.advance(MIN);
      await waitRuns([tickId(1), tickId(3)], "tick 3 started once run 1 finished");
      // The run starts before the schedule's state moves past its tick: wait for the state.
      await waitFor(async () => (await engine.getSchedule("s")).firedCount === 2, { what: "tick 3 recorded" });
      expect(await engine.getSchedule("s")).toMatchObject({ firedCount: 2, skippedCount: 1, lastRunId: tickId(3), lastRunStatus: expect.any(String) });
    });

    it("overlap buffer: one tick waits for the previous run and then starts; a second one meanwhile is skipped", async () => {
      const { clock, engine, tickId, waitRuns, runIds } = await setUp({ workflow: held, overlap: "buffer" });
      engine.startWorker({ pollInterval: 10 });
      clock.advance(MIN);
      await waitRuns([tickId(1)], "tick 1 started");
      clock.advance(MIN);
      await waitFor(async () => (await engine.getSchedule("s")).bufferedTickAt?.getTime() === T + 2 * MIN, { what: "tick 2 buffered" });
      clock.advance(MIN);
      await waitFor(async () => (await engine.getSchedule("s")).skippedCount === 1, { what: "tick 3 skipped (buffer full)" });
      expect(await runIds()).toEqual([tickId(1)]);
      await engine.sendEvent(tickId(1), "go", "done");
      // No clock move: the buffered tick starts because run 1 finished.
      await waitRuns([tickId(1), tickId(2)], "buffered tick 2 started");
      await waitFor(async () => (await engine.getSchedule("s")).firedCount === 2, { what: "buffered tick 2 recorded" });
      expect(await engine.getSchedule("s")).toMatchObject({ bufferedTickAt: null, firedCount: 2, skippedCount: 1, lastRunId: tickId(2) });
    });

    it("overlap allow: every tick starts however many runs are going", async () => {
      const { clock, engine, tickId, waitRuns } = await setUp({ workflow: held, overlap: "allow" });
      engine.startWorker({ pollInterval: 10 });
      for (let m = 1; m <= 3; m++) {
        clock.advance(MIN);
        await waitRuns(
          Array.from({ length: m }, (_, i) => tickId(i + 1)),
          `tick ${m}`,
        );
      }
      expect((await engine.getSchedule("s")).skippedCount).toBe(0);
    });

    for (const [catchUp, fired, missed] of [
      ["none", [], 10],
      ["latest", [10], 9],
      ["all", [6, 7, 8, 9, 10], 5],
    ] as const) {
      it(`catch-up ${catchUp} after 10 minutes down: fires ${JSON.stringify(fired)}, counts ${missed} missed`, async () => {
        const { clock, engine, tickId, waitRuns } = await setUp({ workflow: tick, overlap: "allow", catchUp, maxCatchUp: 5, graceMs: 10_000 });
        // Nobody runs a worker (everything is down) while 10 ticks fall due; the next one is 40 s away.
        clock.advance(10 * MIN + 20_000);
        engine.startWorker({ pollInterval: 10 });
        await waitFor(async () => (await engine.getSchedule("s")).missedCount === missed, { what: `${missed} missed` });
        await waitRuns(
          fired.map((m) => tickId(m)),
          "caught-up ticks",
        );
        for (const m of fired)
          expect(await engine.result(tickId(m), { timeoutMs: 10_000 })).toMatchObject({ scheduledAt: new Date(T + m * MIN).toISOString() });
        await waitFor(async () => (await engine.getSchedule("s")).firedCount === fired.length, { what: "caught-up ticks recorded" });
        expect(await engine.getSchedule("s")).toMatchObject({ firedCount: fired.length, nextTickAt: new Date(T + 11 * MIN) });
        clock.advance(40_000);
        await waitRuns([...fired.map((m) => tickId(m)), tickId(11)], "the next tick on time");
      });
    }

    /**
     * The ticks one schedule fires while a manual clock walks from `from` to `to` in `step`s, each step
     * waiting until the scheduler has passed it (its next tick is after now).
     */
    async function walk(cron: string, timezone: string, from: string, to: string, stepMs: number): Promise<string[]> {
      const clock = new ManualClock(Date.parse(from));
      const engine = await createEngine({
        store: await storeUrl(),
        workflows: [tick],
        clock: clock.now,
        logger: silentLogger,
        scheduler: { pollMs: 20 },
        schedules: [defineSchedule({ name: "s", cron, timezone, workflow: tick, overlap: "allow", catchUp: "all" })],
      });
      onCleanup(() => engine.close());
      engine.startWorker({ pollInterval: 10 });
      while (clock.now() < Date.parse(to)) {
        clock.advance(stepMs);
        await waitFor(async () => ((await engine.getSchedule("s")).nextTickAt?.getTime() ?? 0) > clock.now(), {
          what: `${cron} in ${timezone} past ${new Date(clock.now()).toISOString()}`,
        });
      }
      return (await engine.listRuns({ limit: 1000 })).runs.map((r) => r.runId).sort();
    }
    const ids = (...instants: string[]) => instants.map((iso) => scheduleRunId("s", Date.parse(iso)));

    it("fires at local times in the schedule's time zone, across DST changes (Berlin, New York)", async () => {
      // 02:30 does not exist in Berlin on 2026-03-29 (02:00 CET jumps to 03:00 CEST): that day fires at 03:00 CEST.
      expect(await walk("30 2 * * *", "Europe/Berlin", "2026-03-27T12:00:00Z", "2026-03-31T06:00:00Z", 6 * 3_600_000)).toEqual(
        ids("2026-03-28T01:30:00Z", "2026-03-29T01:00:00Z", "2026-03-30T00:30:00Z", "2026-03-31T00:30:00Z"),
      );
      // 02:30 happens twice in Berlin on 2026-10-25 (CEST, then CET): a fixed hour fires once, at the first.
      expect(await walk("30 2 * * *", "Europe/Berlin", "2026-10-24T12:00:00Z", "2026-10-26T06:00:00Z", 6 * 3_600_000)).toEqual(
        ids("2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z"),
      );
      // An hourly schedule fires every real hour: 02:00 local twice that night (00:00Z in CEST, 01:00Z in CET).
      expect(await walk("0 * * * *", "Europe/Berlin", "2026-10-24T22:30:00Z", "2026-10-25T03:30:00Z", 30 * MIN)).toEqual(
        ids("2026-10-24T23:00:00Z", "2026-10-25T00:00:00Z", "2026-10-25T01:00:00Z", "2026-10-25T02:00:00Z", "2026-10-25T03:00:00Z"),
      );
      // 09:00 in New York is 14:00Z in EST, 13:00Z from 2026-03-08 (EDT).
      expect(await walk("0 9 * * *", "America/New_York", "2026-03-06T12:00:00Z", "2026-03-09T18:00:00Z", 6 * 3_600_000)).toEqual(
        ids("2026-03-06T14:00:00Z", "2026-03-07T14:00:00Z", "2026-03-08T13:00:00Z", "2026-03-09T13:00:00Z"),
      );
    });

    it("pause stops ticks; resume fires from the next tick after now, not the ones that fell due while paused", async () => {
      const { clock, engine, tickId, waitRuns, runIds } = await setUp({ workflow: tick, overlap: "allow", catchUp: "all" });
      engine.startWorker({ pollInterval: 10 });
      expect(await engine.pauseSchedule("s")).toMatchObject({ status: "paused", nextTickAt: null });
      clock.advance(3 * MIN);
      // Three passes at least, and nothing fires.
      const passes = Date.now() + 200;
      await waitFor(() => Date.now() > passes);
      expect(await runIds()).toEqual([]);
      expect(await engine.resumeSchedule("s")).toMatchObject({ status: "active", nextTickAt: new Date(T + 4 * MIN) });
      clock.advance(MIN);
      await waitRuns([tickId(4)], "tick 4 after resume");
      await expect(engine.pauseSchedule("nope")).rejects.toMatchObject({ code: "SCHEDULE_NOT_FOUND" });
    });

    it("engine.schedule creates and redefines at run time; a second engine sees it; bad definitions are typed errors", async () => {
      const { clock, engine, url, tickId, waitRuns } = await setUp({ workflow: tick, overlap: "allow" });
      // "memory:" opens a new store each time: there the second engine is the first.
      const other = url === "memory:" ? engine : await createEngine({ store: url, workflows: [tick], clock: clock.now, logger: silentLogger });
      onCleanup(() => other.close());
      await other.schedule({ name: "dyn", workflow: "tick", cron: "*/2 * * * *", input: { n: 1 } });
      expect((await engine.listSchedules()).map((s) => s.name)).toEqual(["dyn", "s"]);
      engine.startWorker({ pollInterval: 10 });
      clock.advance(2 * MIN);
      await waitRuns([scheduleRunId("dyn", T + 2 * MIN), tickId(1), tickId(2)].sort(), "both schedules fired");
      await waitFor(async () => (await engine.getSchedule("dyn")).firedCount === 1, { what: "dyn's tick recorded" });
      const redefined = await other.schedule({ name: "dyn", workflow: "tick", cron: "*/5 * * * *", input: { n: 2 } });
      expect(redefined).toMatchObject({ cron: "*/5 * * * *", input: { n: 2 }, firedCount: 1, nextTickAt: new Date(T + 5 * MIN) });
      await expect(other.schedule({ name: "x", workflow: "tick", cron: "* * 32 * *" })).rejects.toMatchObject({ code: "INVALID_SCHEDULE" });
      await expect(other.schedule({ name: "x", workflow: "tick", cron: "* * * * *", timezone: "Nowhere/City" })).rejects.toMatchObject({
        code: "INVALID_SCHEDULE",
      });
      await expect(other.schedule({ name: "x", workflow: "unknown", cron: "* * * * *" })).rejects.toMatchObject({ code: "WORKFLOW_NOT_REGISTERED" });
      expect((await engine.listSchedules()).map((s) => s.name)).toEqual(["dyn", "s"]);
      await other.deleteSchedule("dyn");
      await expect(other.getSchedule("dyn")).rejects.toMatchObject({ code: "SCHEDULE_NOT_FOUND" });
    });
  });
}
