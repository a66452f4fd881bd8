/**
 * Crash tests: worker processes are killed with SIGKILL at every named crash point and at
 * random moments; a ledger file outside the engine's database counts step executions.
 */
import { join, resolve } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { parseMarker } from "../src/core/payloads.js";
import { createEngine } from "../src/engine/create-engine.js";
import type { Engine } from "../src/engine/engine.js";
import { CRASH_POINTS } from "../src/engine/crash-points.js";
import { silentLogger } from "../src/engine/logger.js";
import { waitFor } from "../src/testing/wait-for.js";
import { onCleanup, tempDir } from "./support/engines.js";
import { checkRunInvariants, readLedger } from "./support/invariants.js";
import { requireBuild, spawnWorker } from "./support/processes.js";
// @ts-expect-error plain JS fixture
import { expectedOutput, workflows } from "./fixtures/crash-workflows.mjs";

// Bounded by its rounds, not by the clock: a loaded machine only makes each round slower.
const RANDOM_KILLS_TIMEOUT_MS = 180_000;
// Random kills that all land before a loaded worker makes progress are failed recoveries in a row;
// these tests are about exactly-once effects, so the dead-letter limit (tested in deploys) is off.
const NO_DEAD_LETTER = { CAIRN_TEST_MAX_RECOVERY: "0" };

const WORKFLOWS = resolve("test/fixtures/crash-workflows.mjs");
const LEASE_MS = "300";
const RUNS = 3;

interface Scenario {
  engine: Engine;
  env: Record<string, string>;
  ledger: string;
  runIds: string[];
}

async function setUp(name: string, runs = RUNS, inlineLimit?: number): Promise<Scenario> {
  requireBuild();
  const dir = tempDir();
  const store = `sqlite:${join(dir, "cairn.db")}`;
  const ledger = join(dir, "ledger.txt");
  const engine = await createEngine({ store, workflows, logger: silentLogger, payloads: inlineLimit === undefined ? {} : { inlineLimit } });
  onCleanup(() => engine.close());
  const runIds: string[] = [];
  for (let i = 0; i < runs; i++) {
    const runId = `${name}-${i}`;
    runIds.push(runId);
    await engine.start("crashy", { n: i }, { runId });
  }
  // One run finds its event already buffered; the others get theirs while workers come and go.
  await engine.sendEvent(runIds[0]!, "go", { x: 0 }, { eventId: `go-${runIds[0]}` });
  return {
    engine,
    env: {
      CAIRN_TEST_STORE: store,
      CAIRN_TEST_WORKFLOWS: WORKFLOWS,
      CAIRN_TEST_LEDGER: ledger,
      CAIRN_TEST_LEASE_MS: LEASE_MS,
      ...(inlineLimit === undefined ? {} : { CAIRN_PAYLOAD_INLINE_LIMIT: String(inlineLimit) }),
    },
    ledger,
    runIds,
  };
}

async function allDone(scenario: Scenario): Promise<boolean> {
  for (const runId of scenario.runIds) {
    const run = await scenario.engine.getRun(runId);
    if (run.status !== "completed") return false;
  }
  return true;
}

/** Sends every run its event, again and again (same eventId): duplicates must be no-ops. */
async function sendEvents(scenario: Scenario): Promise<void> {
  for (const [i, runId] of scenario.runIds.entries()) {
    await scenario.engine.sendEvent(runId, "go", { x: i }, { eventId: `go-${runId}` });
  }
}

async function finishWithCleanWorker(scenario: Scenario): Promise<void> {
  const worker = spawnWorker(scenario.env);
  await worker.ready;
  await sendEvents(scenario);
  await waitFor(() => allDone(scenario), { timeoutMs: 30_000, what: "all runs completed" });
  worker.child.kill("SIGTERM");
  await worker.exited;
}

async function verify(scenario: Scenario): Promise<void> {
  const ledger = readLedger(scenario.ledger);
  for (const [i, runId] of scenario.runIds.entries()) {
    expect(await scenario.engine.result(runId)).toEqual(expectedOutput(i, i));
    const journal = await checkRunInvariants(scenario.engine, runId, ledger);
    const received = journal.filter((e) => e.kind === "event.received");
    expect(received.map((e) => (e.data as { eventId: string }).eventId)).toEqual([`go-${runId}`]);
    await checkRunInvariants(scenario.engine, `${runId}/crash-sub#0`, ledger);
  }
}

/** Kills workers at the point's 1st to 4th hit (until one finishes the runs), then finishes and verifies. */
async function crashAt(point: string, scenario: Scenario): Promise<void> {
  let crashes = 0;
  for (let hit = 1; hit <= 4; hit++) {
    const worker = spawnWorker({ ...scenario.env, CAIRN_CRASH_AT: `${point}:${hit}` });
    await worker.ready.catch(() => undefined);
    await sendEvents(scenario);
    const ended = await waitFor(
      async () => (worker.child.signalCode ?? worker.child.exitCode ?? ((await allDone(scenario)) ? "done" : false)) as string | false,
      {
        timeoutMs: 30_000,
        what: `worker crash at ${point}:${hit} or completion`,
      },
    );
    if (ended === "SIGKILL") crashes += 1;
    else {
      worker.child.kill("SIGTERM");
      await worker.exited;
      break;
    }
  }
  expect(crashes, `crash point ${point} was reached`).toBeGreaterThan(0);
  if (!(await allDone(scenario))) await finishWithCleanWorker(scenario);
  await verify(scenario);
}

describe("SIGKILL at every crash point", () => {
  it.each(CRASH_POINTS)("%s", async (point) => crashAt(point, await setUp(point)));
});

describe("SIGKILL with every payload offloaded to a blob (inline limit 0)", () => {
  // Loop snapshots, step results, events and child outputs all stored as blob references.
  it.each(["after-snapshot", "after-consume", "before-suspend"])("%s", async (point) => {
    const scenario = await setUp(`blob-${point}`, RUNS, 0);
    await crashAt(point, scenario);
    const db = new Database(scenario.env.CAIRN_TEST_STORE!.slice("sqlite:".length), { readonly: true });
    const stored = db.prepare("SELECT payload FROM journal WHERE kind = 'loop.snapshot'").pluck().all() as string[];
    db.close();
    expect(stored.length).toBeGreaterThan(0);
    for (const payload of stored) expect(parseMarker(payload)?.kind).toBe("blob");
  });
});

describe("SIGKILL at random moments", () => {
  it(
    "every run completes correctly across many random kills",
    async () => {
      const scenario = await setUp("random", 8);
      Object.assign(scenario.env, NO_DEAD_LETTER);
      let kills = 0;
      for (let round = 0; round < 12 && !(await allDone(scenario)); round++) {
        // Slow steps (40 ms each) so that kills land inside steps, not only between them.
        const worker = spawnWorker({ ...scenario.env, CAIRN_TEST_STEP_MS: "40" });
        await worker.ready;
        if (round >= 3) await sendEvents(scenario);
        await new Promise((r) => setTimeout(r, 20 + Math.floor(Math.random() * 200)));
        worker.child.kill("SIGKILL");
        await worker.exited;
        kills += 1;
      }
      expect(kills).toBeGreaterThanOrEqual(4);
      await finishWithCleanWorker(scenario);
      await verify(scenario);
    },
    RANDOM_KILLS_TIMEOUT_MS,
  );
});
