/**
 * Outbox delivery across crashes: worker and dispatcher processes are killed with SIGKILL at the
 * dispatcher's crash points (before a delivery, after it but before it is marked), after step
 * outcomes, and at random moments. A ledger file outside the database records every delivery:
 * every emitted message must be delivered at least once, and every duplicate carries the same message id.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { createEngine } from "../src/engine/create-engine.js";
import type { Engine } from "../src/engine/engine.js";
import { silentLogger } from "../src/engine/logger.js";
import { onCleanup, tempDir } from "./support/engines.js";
import { freshPgUrl, pgReachable } from "./support/pg-schema.js";
import { crashAtPoint, finishCleanly, requireBuild, spawnWorker, supervise, type Supervision } from "./support/processes.js";
// @ts-expect-error plain JS fixture
import { workflows } from "./fixtures/outbox-workflows.mjs";

// Bounded by its rounds, not by the clock: a loaded machine only makes each round slower.
const RANDOM_KILLS_TIMEOUT_MS = 180_000;

const FIXTURE = resolve("test/fixtures/outbox-workflows.mjs");
const RUNS = 2;
const COUNT = 4;

interface Scenario {
  engine: Engine;
  count: number;
  ledger: string;
  runIds: string[];
  supervision: Supervision;
}

async function setUp(store: string, name: string, count = COUNT): Promise<Scenario> {
  requireBuild();
  const ledger = join(tempDir(), "ledger.txt");
  writeFileSync(ledger, "");
  // The test's own engine only starts runs and reads: no worker, no dispatcher.
  const engine = await createEngine({ store, workflows, logger: silentLogger });
  onCleanup(() => engine.close());
  const runIds = Array.from({ length: RUNS }, (_, i) => `${name}-${i}`);
  for (const runId of runIds) await engine.start("emitter", { count }, { runId });
  const done = async (): Promise<boolean> => {
    for (const runId of runIds) if ((await engine.getRun(runId)).status !== "completed") return false;
    const delivered = await engine.listOutbox({ status: ["delivered"], limit: 1000 });
    return delivered.length === RUNS * count;
  };
  return {
    engine,
    count,
    ledger,
    runIds,
    supervision: {
      env: { CAIRN_TEST_STORE: store, CAIRN_TEST_WORKFLOWS: FIXTURE, CAIRN_TEST_LEDGER: ledger, CAIRN_TEST_LEASE_MS: "300" },
      tick: async () => {},
      done,
    },
  };
}

/** Checks the journal, the outbox and the ledger; returns how many deliveries were duplicates. */
async function verify(s: Scenario): Promise<number> {
  const emitted: string[] = [];
  for (const runId of s.runIds) {
    const output = await s.engine.result<string[]>(runId, { timeoutMs: 1000 });
    const journal = await s.engine.journal(runId);
    const ids = journal.filter((e) => e.kind === "outbox.emitted").map((e) => (e.data as { messageId: string }).messageId);
    // One entry per emit, never a second one on replay, and the ids the workflow saw are the journal's.
    expect(ids).toEqual(Array.from({ length: s.count }, (_, i) => `${runId}:crash.topic#${i}`));
    expect(output).toEqual(ids);
    emitted.push(...ids);
  }
  const rows = await s.engine.listOutbox({ limit: 1000 });
  expect(rows.map((m) => m.messageId).sort()).toEqual([...emitted].sort());
  expect(rows.every((m) => m.status === "delivered")).toBe(true);

  const lines = existsSync(s.ledger) ? readFileSync(s.ledger, "utf8").split("\n").filter(Boolean) : [];
  const delivered = lines.map((line) => {
    const [word, messageId, i] = line.split(" ");
    expect(word).toBe("deliver");
    // A duplicate is the same message: same id, same payload.
    expect(messageId).toMatch(new RegExp(`:crash\\.topic#${i}$`));
    return messageId!;
  });
  for (const id of delivered) expect(emitted).toContain(id);
  for (const id of emitted) expect(delivered, `message ${id} was delivered`).toContain(id);
  return delivered.length - new Set(delivered).size;
}

async function killBothAtRandom(s: Scenario, rounds: number): Promise<number> {
  let kills = 0;
  for (let round = 0; round < rounds && !(await s.supervision.done()); round++) {
    const slow = { CAIRN_TEST_STEP_MS: "40" };
    const worker = spawnWorker({ ...s.supervision.env, ...slow, CAIRN_TEST_ROLE: "runs" });
    const dispatcher = spawnWorker({ ...s.supervision.env, ...slow, CAIRN_TEST_ROLE: "dispatcher" });
    await Promise.all([worker.ready, dispatcher.ready]);
    const timers = [worker, dispatcher].map((p) => setTimeout(() => p.child.kill("SIGKILL"), 20 + Math.floor(Math.random() * 250)));
    await supervise(worker, s.supervision);
    await supervise(dispatcher, s.supervision);
    timers.forEach(clearTimeout);
    for (const p of [worker, dispatcher]) {
      if (p.child.signalCode === "SIGKILL") kills += 1;
      else p.child.kill("SIGKILL");
      await p.exited;
    }
  }
  return kills;
}

const stores: [string, () => string][] = [["sqlite", () => `sqlite:${join(tempDir(), "cairn.db")}`]];
if (await pgReachable()) stores.push(["postgres", () => freshPgUrl()]);

describe.each(stores)("outbox delivery across crashes on %s", (kind, makeStore) => {
  it.each([
    ["before-deliver", "crash.topic"],
    ["after-deliver", "crash.topic"],
    ["after-outcome", "work"],
  ])("SIGKILL at %s: every message is delivered at least once, duplicates by the same id", async (point, match) => {
    const s = await setUp(makeStore(), `${kind}-${point}`);
    const crashes = await crashAtPoint(s.supervision, point, match);
    expect(crashes, `crash point ${point} was reached`).toBeGreaterThan(0);
    await finishCleanly(s.supervision);
    const duplicates = await verify(s);
    // Killed after delivering but before marking it: that message is delivered again, under its id.
    if (point === "after-deliver") expect(duplicates).toBeGreaterThan(0);
    if (point === "before-deliver") expect(duplicates).toBe(0);
  });

  it(
    "SIGKILL of separate worker and dispatcher processes at random moments",
    async () => {
      // Enough work (2 runs × 16 slow steps and deliveries) that most rounds end in kills, not completion.
      const s = await setUp(makeStore(), `${kind}-random`, 16);
      const kills = await killBothAtRandom(s, 12);
      expect(kills).toBeGreaterThanOrEqual(4);
      await finishCleanly(s.supervision);
      await verify(s);
    },
    RANDOM_KILLS_TIMEOUT_MS,
  );
});
