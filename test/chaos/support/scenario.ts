import { join } from "node:path";
import { expect } from "vitest";
import { CairnError, isCairnError } from "../../../src/core/errors.js";
import { createEngine } from "../../../src/engine/create-engine.js";
import type { Engine } from "../../../src/engine/engine.js";
import { silentLogger } from "../../../src/engine/logger.js";
import { waitFor } from "../../../src/testing/wait-for.js";
import { onCleanup, tempDir } from "../../support/engines.js";
import { readLedger } from "../../support/invariants.js";
// @ts-expect-error plain JS fixture
import { chaosOutput, workflows } from "../../fixtures/chaos-workflows.mjs";
import { checkRun } from "./checks.js";
import { CHAOS_WORKFLOWS, Cluster } from "./cluster.js";
import { killFault, Nemesis, pauseFault, severFault, type Fault } from "./nemesis.js";
import { chaosSeed, seededRng } from "./rng.js";

/** Where the chaos runs: the workers' store URL, the test's own (never faulted), and the database faults on offer. */
export interface ChaosTarget {
  workerUrl: string;
  controlUrl: string;
  /** Terminates the workers' database sessions; returns how many. */
  sever?: () => Promise<number>;
  /** The workers' database sessions in a transaction or waiting, for a failure message (see `ChaosSchema.sessions`). */
  sessions?: () => Promise<string[]>;
  /** Restarts the database server (soak tier only). */
  restart?: () => Promise<void>;
}

export interface ChaosPlan {
  label: string;
  runs: number;
  workers: number;
  /** How long the nemesis runs. */
  faultMs: number;
  /** Pause between faults. */
  gap: { minMs: number; maxMs: number };
  leaseMs: number;
  /** After the faults stop, every run must finish within this. */
  settleMs: number;
}

const LIVE = ["pending", "running", "suspended"] as const;
/** A runnable run nobody claimed for this long, during the faults or after, is stuck. */
const STUCK_GRACE_MS = 10_000;

/**
 * The chaos scenario: `plan.workers` worker processes run `plan.runs` chaos workflows (steps,
 * parallel steps, a sleep, an event wait, a child) started at random moments, while the test sends
 * each run its event (with duplicates) at random moments and a seeded nemesis kills, pauses and
 * disconnects workers. Then it checks that everything finished, correctly, exactly once.
 */
export async function runChaos(target: ChaosTarget, plan: ChaosPlan): Promise<void> {
  const seed = chaosSeed(plan.label);
  const rng = seededRng(seed);
  const ledger = join(tempDir(), "ledger.txt");
  const engine = await createEngine({ store: target.controlUrl, workflows, logger: silentLogger });
  onCleanup(() => engine.close());
  const cluster = new Cluster({
    CAIRN_TEST_STORE: target.workerUrl,
    CAIRN_TEST_WORKFLOWS: CHAOS_WORKFLOWS,
    CAIRN_TEST_LEDGER: ledger,
    CAIRN_TEST_LEASE_MS: String(plan.leaseMs),
    CAIRN_TEST_CONCURRENCY: "16",
    CAIRN_TEST_STEP_MS: "20",
    CAIRN_TEST_STEP_JITTER_MS: "200",
    CAIRN_TEST_LOG: process.env.CAIRN_CHAOS_LOG ?? "silent",
  });
  await cluster.topUp(plan.workers);

  const faults: Fault[] = [killFault(cluster, plan.workers), pauseFault(cluster, plan.leaseMs, plan.workers)];
  if (target.sever) faults.push(severFault(target.sever));
  if (target.restart) faults.push({ name: "restart", weight: 1, run: async () => (await target.restart!(), "database") });
  const started = Date.now();
  const nemesis = new Nemesis(seededRng(seed ^ 0x5bd1e995), faults, plan.gap);
  const report = () => `seed ${seed}; faults:\n  ${nemesis.log.join("\n  ")}`;
  const stuck = watchStuck(engine, STUCK_GRACE_MS, target.sessions);

  // Starts spread over the first half of the window; each run's event sent 1-3 times at random moments after its start.
  const runs = Array.from({ length: plan.runs }, (_, n) => ({ n, runId: `chaos-${seed}-${n}`, x: rng.int(0, 99), napMs: rng.int(50, 800) }));
  const schedule: { at: number; run: (typeof runs)[number]; act: "start" | "send" }[] = [];
  for (const run of runs) {
    const startAt = rng.int(0, plan.faultMs / 2);
    schedule.push({ at: startAt, run, act: "start" });
    for (let k = rng.int(1, 3); k > 0; k--) schedule.push({ at: startAt + rng.int(0, plan.faultMs - startAt), run, act: "send" });
  }
  schedule.sort((a, b) => a.at - b.at || (a.act === b.act ? 0 : a.act === "start" ? -1 : 1));
  const send = (run: (typeof runs)[number]) => sendEvent(engine, run.runId, run.x);
  try {
    for (const item of schedule) {
      const wait = started + item.at - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      if (item.act === "start") await retrying(() => engine.start("chaos", { n: item.run.n, napMs: item.run.napMs }, { runId: item.run.runId }));
      else await send(item.run);
    }
    const rest = started + plan.faultMs - Date.now();
    if (rest > 0) await new Promise((r) => setTimeout(r, rest));
  } finally {
    await nemesis.stop();
    cluster.resumeAll();
  }
  await cluster.topUp(plan.workers);
  console.log(
    `[chaos] ${plan.label}: ${nemesis.log.length} faults ${JSON.stringify(nemesis.counts())} in ${Date.now() - started} ms:\n  ${nemesis.log.join("\n  ")}`,
  );

  // Faults over: every run must finish within the deadline, and nothing may be stuck meanwhile.
  for (const run of runs) await send(run);
  const settleStart = Date.now();
  await waitFor(
    async () => {
      const { runs: live } = await engine.listRuns({ status: [...LIVE], limit: 1000 });
      return live.length === 0;
    },
    { timeoutMs: plan.settleMs, intervalMs: 250, what: `every run finished after the faults stopped (${report()})` },
  ).catch(async (error: unknown) => {
    throw new Error(`${(error as Error).message}\n${await describeLive(engine)}\n${workersOutput(cluster)}`);
  });
  expect(await stuck.stop(), `runs left stuck at any time (${report()})\n${workersOutput(cluster)}`).toEqual([]);
  console.log(`[chaos] ${plan.label}: settled ${Date.now() - settleStart} ms after the faults stopped`);

  const casualties = cluster.casualties();
  expect(
    casualties.map((w) => `${w.name}: ${w.output()}`),
    "no worker died of a database fault",
  ).toEqual([]);
  const exits = await cluster.stopAll();
  expect(
    exits.filter((e) => e.code !== 0),
    "workers drain and exit 0 on SIGTERM",
  ).toEqual([]);

  // Every worker is gone, so the ledger holds every execution, even those of workers paused mid-step.
  try {
    await verify(engine, runs, readLedger(ledger), plan.label);
  } catch (error) {
    (error as Error).message += `\n(${report()})`;
    throw error;
  }
}

/** The results, journals and ledger of every run (and its child), once all are finished. */
async function verify(engine: Engine, runs: { n: number; runId: string; x: number }[], entries: Map<string, number[]>, label: string): Promise<void> {
  let takeovers = 0;
  const reruns = [...entries.values()].filter((attempts) => attempts.length > 1).length;
  for (const run of runs) {
    const info = await engine.getRun(run.runId);
    expect(info.status, run.runId).toBe("completed");
    expect(info.output, `${run.runId} output`).toEqual(chaosOutput(run.n, run.x));
    const journal = await checkRun(engine, run.runId, entries);
    await checkRun(engine, `${run.runId}/chaos-kid#0`, entries);
    const received = journal.filter((e) => e.kind === "event.received").map((e) => (e.data as { eventId: string }).eventId);
    expect(received, `${run.runId} consumed its event once`).toEqual([`go-${run.runId}`]);
    takeovers += journal.filter((e) => e.kind === "run.claimed" && (e.data as { from: string }).from === "running").length;
  }
  expect(await engine.listStuckRuns({ graceMs: 0 })).toEqual([]);
  console.log(
    `[chaos] ${label}: ${runs.length} runs checked; ${takeovers} leases taken over from killed or paused workers; ${reruns} steps ran again after an interrupted attempt`,
  );
  // The faults bit: leases of killed or paused workers were taken over.
  expect(takeovers).toBeGreaterThan(0);
}

/** Sends a run its event; repeats are no-ops, and sends after the run finished are refused, which is fine. */
async function sendEvent(engine: Engine, runId: string, x: number): Promise<void> {
  await retrying(async () => {
    try {
      await engine.sendEvent(runId, "go", { x }, { eventId: `go-${runId}` });
    } catch (error) {
      if (!isCairnError(error, "RUN_FINISHED")) throw error;
    }
  });
}

/** The test's own calls ride out a database restart (soak tier). */
async function retrying<T>(call: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      if (attempt >= 40 || error instanceof CairnError) throw error;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

/**
 * Samples `listStuckRuns` every second until stopped; returns what it saw: each run once, when
 * first seen and its state then, and the workers' open transactions at that moment (`sessions`).
 */
function watchStuck(engine: Engine, graceMs: number, sessions?: () => Promise<string[]>): { stop(): Promise<string[]> } {
  const seen = new Map<string, string>();
  const started = Date.now();
  let sampling = Promise.resolve();
  const timer = setInterval(() => {
    sampling = engine.listStuckRuns({ graceMs }).then(
      async (runs) => {
        const at = `+${((Date.now() - started) / 1000).toFixed(1)}s`;
        const fresh = runs.filter((r) => !seen.has(r.runId));
        for (const r of fresh) {
          const lease = r.leaseOwner ? ` lease ${r.leaseOwner} epoch ${r.leaseEpoch} until ${r.leaseExpiresAt?.toISOString()}` : "";
          seen.set(r.runId, `${at} ${r.runId} (${r.status}${lease}, wake ${r.wakeAt?.toISOString()}, waiting ${JSON.stringify(r.waitingFor)})`);
        }
        if (fresh.length > 0 && sessions) seen.set(`sessions ${at}`, `${at} workers' sessions in a transaction:\n    ${(await sessions()).join("\n    ")}`);
      },
      () => undefined, // the database restarting (soak tier)
    );
  }, 1000);
  onCleanup(() => clearInterval(timer));
  return {
    async stop() {
      clearInterval(timer);
      await sampling;
      return [...seen.values()];
    },
  };
}

/** The end of each live worker's output (its warnings with CAIRN_CHAOS_LOG=warn), for a failure message. */
function workersOutput(cluster: Cluster): string {
  return `live workers' output:\n${cluster
    .alive()
    .map((w) => `${w.name}: ${w.output().slice(-2000)}`)
    .join("\n")}`;
}

async function describeLive(engine: Engine): Promise<string> {
  const { runs } = await engine.listRuns({ status: [...LIVE], limit: 20 });
  const lines = runs.map(
    (r) =>
      `${r.runId} ${r.status} epoch ${r.leaseEpoch} owner ${r.leaseOwner} lease ${r.leaseExpiresAt?.toISOString()} wake ${r.wakeAt?.toISOString()} waiting ${JSON.stringify(r.waitingFor)}`,
  );
  return `live runs (first 20):\n  ${lines.join("\n  ")}`;
}
