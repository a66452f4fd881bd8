/**
 * Worker clocks skewed by minutes on PostgreSQL, where leases and timers follow the database
 * clock: no timer fires early by the database clock, and no live lease is stolen.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createEngine } from "../../src/engine/create-engine.js";
import type { Engine } from "../../src/engine/engine.js";
import { silentLogger } from "../../src/engine/logger.js";
import { waitFor } from "../../src/testing/wait-for.js";
import { onCleanup, tempDir } from "../support/engines.js";
import { readLedger } from "../support/invariants.js";
// @ts-expect-error plain JS fixture
import { workflows } from "../fixtures/chaos-workflows.mjs";
import { checkRun } from "./support/checks.js";
import { CHAOS_WORKFLOWS, Cluster } from "./support/cluster.js";
import { chaosSchema } from "./support/pg.js";

const MINUTE = 60_000;
/** Write latency plus clock-calibration error (half a round trip) allowed on a 2 s sleep. */
const TOLERANCE_MS = 250;

async function setUp(clockOffsetMs = 0) {
  const schema = await chaosSchema();
  const url = schema.url(`${schema.name}_w`);
  const ledger = join(tempDir(), "ledger.txt");
  const engine: Engine = await createEngine({ store: url, workflows, logger: silentLogger, clock: () => Date.now() + clockOffsetMs });
  onCleanup(() => engine.close());
  const cluster = new Cluster({ CAIRN_TEST_STORE: url, CAIRN_TEST_WORKFLOWS: CHAOS_WORKFLOWS, CAIRN_TEST_LEDGER: ledger });
  return { engine, cluster, ledger };
}

describe("skewed worker clocks", () => {
  it("a 2 s sleep armed and fired by workers 7 minutes fast and 7 minutes slow lasts 2 s of database time", async () => {
    // The test's own engine is skewed too: its start and journal reads must not care.
    const { engine, cluster, ledger } = await setUp(-3 * MINUTE);
    const skews = [7 * MINUTE, -7 * MINUTE];
    await Promise.all(skews.map((skew) => cluster.spawn({ CAIRN_TEST_CLOCK_OFFSET_MS: String(skew), CAIRN_TEST_LEASE_MS: "2000" }).ready));
    const runIds = Array.from({ length: 12 }, (_, i) => `nap-${i}`);
    for (const runId of runIds) await engine.start("napper", {}, { runId });
    // Not much more than 2 s either: a worker 7 minutes slow must not sleep 7 minutes.
    for (const runId of runIds) expect(await engine.result(runId, { timeoutMs: 20_000 })).toBe("rested");

    const entries = readLedger(ledger);
    for (const runId of runIds) {
      const journal = await checkRun(engine, runId, entries);
      const started = journal.find((e) => e.kind === "sleep.started")!;
      const completed = journal.find((e) => e.kind === "sleep.completed")!;
      const wakeAt = (started.data as { wakeAt: number }).wakeAt;
      // Journal times are the database's. The sleep was armed just before its entry was written, so
      // 2 s after that entry is when it may end, less the write's latency and the engine's error in
      // measuring the database clock (TOLERANCE; a skew of minutes would miss by minutes).
      const slept = completed.at.getTime() - started.at.getTime();
      expect(slept, `${runId} slept ${slept} ms of database time`).toBeGreaterThanOrEqual(2000 - TOLERANCE_MS);
      expect(slept, `${runId} slept ${slept} ms of database time`).toBeLessThan(2000 + 8000);
      expect(wakeAt - started.at.getTime(), `${runId} was armed for 2 s from the database's now`).toBeGreaterThan(2000 - TOLERANCE_MS);
      expect(completed.at.getTime(), `${runId} fired at or after its due time`).toBeGreaterThanOrEqual(wakeAt);
    }
    expect((await cluster.stopAll()).filter((e) => e.code !== 0)).toEqual([]);
  });

  it("a worker 10 minutes fast never takes a live lease from a heartbeating worker with the right time", async () => {
    await expectLeaseKept({ holder: 0, thief: 10 * MINUTE });
  });

  it("a worker with the right time never takes a live lease from a heartbeating worker 10 minutes slow", async () => {
    await expectLeaseKept({ holder: -10 * MINUTE, thief: 0 });
  });
});

/** A (clock `holder` off) holds a run through a 7 s step, over two leases long, while B (clock `thief` off) polls. */
async function expectLeaseKept({ holder, thief }: { holder: number; thief: number }): Promise<void> {
  const { engine, cluster, ledger } = await setUp();
  const lease = { CAIRN_TEST_LEASE_MS: "3000", CAIRN_TEST_HEARTBEAT_MS: "250", CAIRN_TEST_STEP_MS: "7000" };
  const a = cluster.spawn({ ...lease, CAIRN_TEST_CLOCK_OFFSET_MS: String(holder) });
  await a.ready;
  await engine.start("hold", {}, { runId: "held" });
  await waitFor(async () => (await engine.journal("held")).some((e) => e.kind === "step.started"), { what: "the holder started its long step" });
  const b = cluster.spawn({ ...lease, CAIRN_TEST_CLOCK_OFFSET_MS: String(thief), CAIRN_TEST_POLL_MS: "20" });
  await b.ready;
  // B polls through most of the step while A heartbeats.
  expect((await engine.getRun("held")).status).toBe("running");
  expect(await engine.result("held", { timeoutMs: 20_000 })).toBe("held");

  const journal = await checkRun(engine, "held", readLedger(ledger));
  const claims = journal.filter((e) => e.kind === "run.claimed").map((e) => (e.data as { workerId: string }).workerId);
  expect(claims).toEqual([await a.ready]);
  expect(readLedger(ledger).get("held:long#0")).toEqual([1]);
  expect((await cluster.stopAll()).filter((e) => e.code !== 0)).toEqual([]);
}

describe("a worker clock that steps after start-up", () => {
  // Between readings of the database clock the engine advances its time with the monotonic
  // clock, so a wall-clock step (NTP, a resumed VM) cannot make a sleep or a wait timeout due early.
  it("a worker whose clock jumps 10 minutes ahead after calibrating fires no sleep early when an event wakes the run", async () => {
    const { engine, cluster } = await setUp();
    const worker = cluster.spawn({ CAIRN_TEST_CLOCK_STEP_MS: String(10 * MINUTE), CAIRN_TEST_LEASE_MS: "2000" });
    await worker.ready;
    await engine.start("poked-napper", {}, { runId: "poked" });
    await waitFor(async () => (await engine.getRun("poked")).status === "suspended", { what: "the sleep armed and the run suspended" });
    worker.child.kill("SIGUSR2");
    await waitFor(() => worker.output().includes("clock stepped"), { what: "the worker clock stepped" });
    await engine.sendEvent("poked", "poke", "hi");
    expect(await engine.result("poked", { timeoutMs: 20_000 })).toBe("hi");
    const journal = await engine.journal("poked");
    const started = journal.find((e) => e.kind === "sleep.started")!;
    const completed = journal.find((e) => e.kind === "sleep.completed")!;
    expect(completed.at.getTime() - started.at.getTime(), "slept (ms of database time)").toBeGreaterThanOrEqual(2000 - TOLERANCE_MS);
  });
});
