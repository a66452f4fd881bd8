/**
 * Schedules under real worker processes sharing one store: three schedulers fire a per-second schedule
 * exactly once per tick with no tick missed, and a scheduler SIGKILLed after starting a tick's run but
 * before recording it neither loses nor doubles that tick. Effects are counted in a ledger file.
 */
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { createEngine } from "../../src/engine/create-engine.js";
import type { Engine } from "../../src/engine/engine.js";
import { silentLogger } from "../../src/engine/logger.js";
import { parseScheduleRunId, scheduleRunId } from "../../src/engine/schedule.js";
import { waitFor } from "../../src/testing/wait-for.js";
import { onCleanup, tempDir } from "../support/engines.js";
import { requireBuild, spawnWorker, type WorkerProcess } from "../support/processes.js";
// @ts-expect-error plain JS fixture
import { beat, beatSchedule, skipSchedule, slowBeat } from "../fixtures/schedule-workflows.mjs";

const WORKER = resolve("test/fixtures/schedule-worker.mjs");
const SECOND = 1000;

async function setUp(store: string, slow = false) {
  requireBuild();
  const ledger = join(tempDir(), "ledger.txt");
  // The test's engine finishes leftover runs in this process, so its steps must find the ledger too.
  const previousLedger = process.env["CAIRN_TEST_LEDGER"];
  process.env["CAIRN_TEST_LEDGER"] = ledger;
  onCleanup(() => {
    if (previousLedger === undefined) delete process.env["CAIRN_TEST_LEDGER"];
    else process.env["CAIRN_TEST_LEDGER"] = previousLedger;
  });
  // The test's engine saves the schedule (its cursor starts now) and later finishes leftover runs; it never fires ticks.
  const [workflow, schedule] = slow ? [slowBeat, skipSchedule] : [beat, beatSchedule];
  const engine: Engine = await createEngine({ store, workflows: [workflow], schedules: [schedule], logger: silentLogger, scheduler: { enabled: false } });
  onCleanup(() => engine.close());
  const createdAt = (await engine.store.getSchedule(schedule.name))!.createdAt;
  const env = { CAIRN_TEST_STORE: store, CAIRN_TEST_LEDGER: ledger, CAIRN_TEST_SCHEDULE_LEASE_MS: "1000", CAIRN_TEST_SCHEDULE: schedule.name };
  return { engine, ledger, env, createdAt };
}

async function scheduleRuns(engine: Engine, workflow = "beat"): Promise<string[]> {
  const runs = (await engine.listRuns({ workflow, limit: 1000 })).runs;
  return runs.map((r) => r.runId).sort();
}

async function stopAll(workers: WorkerProcess[]): Promise<void> {
  for (const w of workers) if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill("SIGTERM");
  await Promise.all(workers.map((w) => w.exited));
}

/**
 * Every whole second after the schedule was created up to its cursor has exactly one run and one
 * effect in the ledger; there are no other runs. Returns the ticks.
 */
async function checkEveryTickOnce(engine: Engine, ledger: string, createdAt: number): Promise<number[]> {
  const state = (await engine.store.getSchedule("beat"))!;
  const expected: string[] = [];
  for (let t = Math.floor(createdAt / SECOND) * SECOND + SECOND; t <= state.cursorAt; t += SECOND) expected.push(scheduleRunId("beat", t));
  const runs = await scheduleRuns(engine);
  expect(runs, "one run per tick, none missed, none extra").toEqual(expected.sort());
  expect(state.firedCount).toBe(expected.length);
  expect(state.skippedCount + state.missedCount).toBe(0);
  // Leftover pending runs are finished by this engine's worker (no scheduler: it fires nothing new).
  const worker = engine.startWorker({ pollInterval: 10 });
  for (const runId of runs) await engine.result(runId, { timeoutMs: 30_000 });
  await worker.stop({ drain: true });
  const lines = existsSync(ledger) ? readFileSync(ledger, "utf8").split("\n").filter(Boolean) : [];
  const counts = new Map<string, number>();
  for (const line of lines) counts.set(line, (counts.get(line) ?? 0) + 1);
  expect([...counts.keys()].sort(), "an effect for every tick").toEqual(runs);
  expect(
    [...counts.values()].filter((n) => n !== 1),
    "no effect twice",
  ).toEqual([]);
  return runs.map((runId) => parseScheduleRunId(runId)!.scheduledAt.getTime());
}

export function scheduleWorkersSpec(kind: string, storeUrl: () => Promise<string>): void {
  describe(`schedules with worker processes on ${kind}`, () => {
    it("three workers fire a per-second schedule once per tick, none missed, over several ticks", async () => {
      const { engine, ledger, env, createdAt } = await setUp(await storeUrl());
      const workers = [spawnWorker(env, WORKER), spawnWorker(env, WORKER), spawnWorker(env, WORKER)];
      await Promise.all(workers.map((w) => w.ready));
      await waitFor(async () => (await scheduleRuns(engine)).length >= 6, { timeoutMs: 30_000, what: "six ticks fired" });
      await stopAll(workers);
      expect(workers.map((w) => w.child.exitCode)).toEqual([0, 0, 0]);
      const ticks = await checkEveryTickOnce(engine, ledger, createdAt);
      expect(ticks.length).toBeGreaterThanOrEqual(6);
    }, 90_000);

    it("three workers, overlap skip, runs longer than a tick: never two runs at once, every other tick skipped and counted", async () => {
      const { engine, ledger, env, createdAt } = await setUp(await storeUrl(), true);
      const workers = [spawnWorker(env, WORKER), spawnWorker(env, WORKER), spawnWorker(env, WORKER)];
      await Promise.all(workers.map((w) => w.ready));
      await waitFor(async () => (await engine.store.getSchedule("slow-beat"))!.firedCount >= 3, { timeoutMs: 30_000, what: "three ticks fired" });
      await stopAll(workers);
      expect(workers.map((w) => w.child.exitCode)).toEqual([0, 0, 0]);
      const state = (await engine.store.getSchedule("slow-beat"))!;
      const runs = await scheduleRuns(engine, "slow-beat");
      expect(runs).toHaveLength(state.firedCount);
      // Every tick up to the cursor was fired or skipped, none missed; a 1.5 s run skips at least one tick each.
      const ticks = Math.floor(state.cursorAt / SECOND) - Math.floor(createdAt / SECOND);
      expect(state.firedCount + state.skippedCount).toBe(ticks);
      expect(state.missedCount).toBe(0);
      expect(state.skippedCount).toBeGreaterThanOrEqual(state.firedCount - 1);
      // Leftover runs finish here; then no run started before the previous one had finished.
      const worker = engine.startWorker({ pollInterval: 10 });
      for (const runId of runs) await engine.result(runId, { timeoutMs: 30_000 });
      await worker.stop({ drain: true });
      const infos = await Promise.all(runs.map((runId) => engine.getRun(runId)));
      for (let i = 1; i < infos.length; i++) {
        expect(infos[i]!.createdAt.getTime(), `${infos[i]!.runId} started after ${infos[i - 1]!.runId} finished`).toBeGreaterThanOrEqual(
          infos[i - 1]!.finishedAt!.getTime(),
        );
      }
      expect(readFileSync(ledger, "utf8").split("\n").filter(Boolean).sort()).toEqual(runs);
    }, 90_000);

    it("a scheduler SIGKILLed after starting a tick's run, before recording it, neither loses nor doubles the tick", async () => {
      const { engine, ledger, env, createdAt } = await setUp(await storeUrl());
      const crashing = spawnWorker({ ...env, CAIRN_CRASH_AT: "schedule-after-start:3" }, WORKER);
      await crashing.ready;
      expect(await crashing.exited).toMatchObject({ signal: "SIGKILL" });
      // The third tick's run exists, but the schedule's state was not moved past it.
      const state = (await engine.store.getSchedule("beat"))!;
      const orphan = (await scheduleRuns(engine)).at(-1)!;
      expect(parseScheduleRunId(orphan)!.scheduledAt.getTime()).toBeGreaterThan(state.cursorAt);
      expect(state.firedCount).toBe(2);

      // Two more workers: one takes the schedule over once the dead one's lease expires.
      const workers = [spawnWorker(env, WORKER), spawnWorker(env, WORKER)];
      await Promise.all(workers.map((w) => w.ready));
      await waitFor(async () => (await engine.store.getSchedule("beat"))!.firedCount >= 6, { timeoutMs: 30_000, what: "six ticks recorded" });
      await stopAll(workers);
      const ticks = await checkEveryTickOnce(engine, ledger, createdAt);
      expect(ticks).toContain(parseScheduleRunId(orphan)!.scheduledAt.getTime());
    }, 90_000);
  });
}
