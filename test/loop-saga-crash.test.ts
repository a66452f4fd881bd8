/**
 * Crash tests of resources and compensations inside ctx.loop iterations (the agent loop's ground),
 * on SQLite and PostgreSQL: worker processes are SIGKILLed mid-iteration (a resource held), right
 * after a loop snapshot, inside a release and inside a compensation, and at random moments. A ledger
 * file outside the database proves that no resource leaks, that the continuation never uses a
 * resource of a dead worker (a resume releases it and acquires it again), and that every
 * compensation registered in an iteration runs once, newest first, when the run fails or is cancelled
 * (including after a resume from a loop snapshot written before the first compensable iteration).
 */
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { createEngine } from "../src/engine/create-engine.js";
import type { Engine } from "../src/engine/engine.js";
import { silentLogger } from "../src/engine/logger.js";
import { onCleanup, tempDir } from "./support/engines.js";
import { crashAtPoint, finishCleanly, killAtRandom, requireBuild, spawnWorker, supervise, type Supervision } from "./support/processes.js";
import { DURABLE_STORES, durableStoreUrl, postgresReachable, type DurableStore } from "./support/store-urls.js";
// @ts-expect-error plain JS fixture
import { COMPENSATED_FROM, LEGS, workflows } from "./fixtures/loop-saga-workflows.mjs";

const FIXTURE = resolve("test/fixtures/loop-saga-workflows.mjs");
const pgUp = await postgresReachable();
const RUNS = { failing: "fail", cancelled: "wait" } as const;

interface Scenario extends Supervision {
  engine: Engine;
  ledger: string;
  ids: string[];
}

async function setUp(kind: DurableStore, name: string): Promise<Scenario> {
  requireBuild();
  const store = durableStoreUrl(kind);
  const ledger = join(tempDir(), "ledger.txt");
  const engine = await createEngine({ store, workflows, logger: silentLogger });
  onCleanup(() => engine.close());
  const ids = Object.keys(RUNS).map((runId) => `${name}-${runId}`);
  for (const [runId, mode] of Object.entries(RUNS)) await engine.start("loop-saga", { mode }, { runId: `${name}-${runId}` });
  return {
    engine,
    ledger,
    ids,
    env: { CAIRN_TEST_STORE: store, CAIRN_TEST_WORKFLOWS: FIXTURE, CAIRN_TEST_LEDGER: ledger, CAIRN_TEST_LEASE_MS: "300", CAIRN_TEST_MAX_RECOVERY: "0" },
    async tick() {
      const waiting = await engine.getRun(`${name}-cancelled`);
      if (waiting.status === "suspended") await engine.cancel(waiting.runId, "trip called off").catch(() => undefined);
    },
    async done() {
      for (const runId of ids) if ((await engine.getRun(runId)).status !== "compensated") return false;
      return true;
    },
  };
}

type Line = { what: string; id: string; attempt: number; index: number };

function ledgerLines(path: string): Line[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line, index) => {
      const [what, id, attempt] = line.split(" ");
      return { what: what!, id: id!, attempt: Number(attempt), index };
    });
}

/** Checks both runs against the ledger and their journals; returns how many resources a resume released and acquired again. */
async function verify(s: Scenario): Promise<number> {
  const lines = ledgerLines(s.ledger);
  let reacquired = 0;
  for (const runId of s.ids) {
    expect((await s.engine.getRun(runId)).status, runId).toBe("compensated");
    const journal = await s.engine.journal(runId);
    const mine = lines.filter((line) => line.id.startsWith(`${runId}:`));
    // Resources: every sandbox acquired was released; no release ran twice in one attempt; every use was of a live sandbox.
    const acquired = new Set(mine.filter((l) => l.what === "acquire").map((l) => l.id));
    const releases = mine.filter((l) => l.what === "release");
    expect(new Set(releases.map((l) => l.id)), `${runId}: every sandbox acquired was released (no leak)`).toEqual(acquired);
    for (const id of acquired) {
      const attempts = releases.filter((l) => l.id === id).map((l) => l.attempt);
      expect(new Set(attempts).size, `${id}: no release attempt ran twice`).toBe(attempts.length);
    }
    for (const use of mine.filter((l) => l.what === "use")) {
      const got = mine.find((l) => l.what === "acquire" && l.id === use.id);
      expect(got, `${use.id} was acquired`).toBeDefined();
      const firstRelease = releases.find((l) => l.id === use.id);
      expect(firstRelease === undefined || firstRelease.index > use.index, `${use.id} used after its release (a dead worker's sandbox)`).toBe(true);
    }
    reacquired += journal.filter((e) => e.kind === "resource.released" && (e.data as { by: string }).by === "resume").length;
    // Compensations: one per compensable leg, completed once each, newest leg first.
    let previous = -1;
    for (let leg = (LEGS as number) - 1; leg >= (COMPENSATED_FROM as number); leg--) {
      const key = `legs#0/${leg}/book#0`;
      expect(
        journal.filter((e) => e.opKey === key && e.kind === "compensation.completed"),
        `${runId} ${key} compensated once`,
      ).toHaveLength(1);
      const undos = mine.filter((l) => l.what === "undo" && l.id === `${runId}:${key}:compensate=leg-${leg}`);
      expect(undos.length, `${runId} ${key} undone`).toBeGreaterThan(0);
      const intents = journal.filter((e) => e.opKey === key && e.kind === "compensation.started").length;
      expect(undos.length, `${runId} ${key}: undone again only after an interrupted compensation`).toBeLessThanOrEqual(intents);
      expect(Math.min(...undos.map((l) => l.index)), `${runId} ${key} undone after the newer legs`).toBeGreaterThan(previous);
      previous = Math.max(...undos.map((l) => l.index));
    }
    expect(
      mine.filter((l) => l.what === "undo"),
      `${runId}: nothing else undone`,
    ).toHaveLength(mine.filter((l) => l.what === "undo" && /:legs#0\/\d\/book#0:compensate=leg-\d$/.test(l.id)).length);
  }
  return reacquired;
}

const POINTS: [string, string][] = [
  // Mid-iteration, with the sandbox held: the resume must release it and acquire it again.
  ["after-effect", "/3/use"],
  ["after-intent", "/1/use"],
  ["after-snapshot", "legs"],
  ["after-outcome", "/2/book"],
  ["after-release-intent", "sandbox"],
  ["after-release-effect", "sandbox"],
  ["after-compensation-intent", "/2/book"],
  ["after-compensation-effect", "/3/book"],
];

describe.each(DURABLE_STORES)("loop saga crash tests on %s", (kind) => {
  const test = kind === "postgres" && !pgUp ? it.skip : it;

  test.each(POINTS)("SIGKILL at %s of %s", async (point, match) => {
    const name = `${point}${match.replaceAll("/", "-")}`;
    const s = await setUp(kind, name);
    const crashes = await crashAtPoint(s, point, match);
    expect(crashes, `crash point ${point} (${match}) was reached`).toBeGreaterThan(0);
    await finishCleanly(s);
    const reacquired = await verify(s);
    if (point === "after-snapshot") expect((await s.engine.journal(s.ids[0]!)).filter((e) => e.kind === "loop.snapshot")).toHaveLength(1);
    if (point === "after-effect" || point === "after-intent") expect(reacquired, "a resume released a held sandbox and acquired it again").toBeGreaterThan(0);
  });

  // A resume re-acquires the sandbox of an interrupted iteration; a crash after that acquisition's
  // effect, before its outcome, must not leak it: the next resume acquires again with the same key.
  test("SIGKILL after a re-acquisition's effect, before its outcome", async () => {
    const s = await setUp(kind, "reacquire");
    for (const [point, match] of [
      ["after-effect", "/3/use"],
      ["after-reacquire-effect", "sandbox"],
    ] as const) {
      const worker = spawnWorker({ ...s.env, CAIRN_CRASH_AT: point, CAIRN_CRASH_MATCH: match });
      await worker.ready.catch(() => undefined);
      expect(await supervise(worker, s), `crash point ${point} (${match}) was reached`).toBe("SIGKILL");
    }
    await finishCleanly(s);
    const reacquired = await verify(s);
    expect(reacquired, "a resume released a held sandbox and acquired it again").toBeGreaterThan(0);
  });

  test("SIGKILL at random moments", async () => {
    const s = await setUp(kind, "random");
    const kills = await killAtRandom(s, { CAIRN_TEST_STEP_MS: "20" }, 8, 250);
    expect(kills).toBeGreaterThanOrEqual(1);
    await finishCleanly(s);
    await verify(s);
  }, 180_000);
});
