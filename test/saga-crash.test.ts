/**
 * Crash tests of sagas and resources: worker processes are SIGKILLed at every crash point inside
 * compensation and release, and at random moments, on SQLite and PostgreSQL. A ledger file outside
 * the database proves each compensation and each release was applied once per idempotency key, only
 * re-attempted after an interrupted intent, and in reverse order of registration.
 */
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { createEngine } from "../src/engine/create-engine.js";
import { SAGA_CRASH_POINTS } from "../src/engine/crash-points.js";
import type { Engine, JournalEntryView } from "../src/engine/engine.js";
import { silentLogger } from "../src/engine/logger.js";
import { onCleanup, tempDir } from "./support/engines.js";
import { readFileSync, existsSync } from "node:fs";
import { crashAtPoint, finishCleanly, killAtRandom, requireBuild, type Supervision } from "./support/processes.js";
import { DURABLE_STORES, durableStoreUrl, postgresReachable, type DurableStore } from "./support/store-urls.js";
// @ts-expect-error plain JS fixture
import { FLAKY_LEG, LEGS, workflows } from "./fixtures/saga-workflows.mjs";

// Bounded by its rounds, not by the clock: a loaded machine only makes each round slower.
const RANDOM_KILLS_TIMEOUT_MS = 180_000;

const FIXTURE = resolve("test/fixtures/saga-workflows.mjs");
const pgUp = await postgresReachable();
const RUNS = { failing: "fail", cancelled: "wait" } as const;

interface Scenario extends Supervision {
  engine: Engine;
  ledger: string;
}

async function setUp(kind: DurableStore, name: string): Promise<Scenario> {
  requireBuild();
  const store = durableStoreUrl(kind);
  const ledger = join(tempDir(), "ledger.txt");
  const engine = await createEngine({ store, workflows, logger: silentLogger });
  onCleanup(() => engine.close());
  for (const [runId, mode] of Object.entries(RUNS)) await engine.start("saga-trip", { mode }, { runId: `${name}-${runId}` });
  const ids = Object.keys(RUNS).map((runId) => `${name}-${runId}`);
  return {
    engine,
    ledger,
    env: { CAIRN_TEST_STORE: store, CAIRN_TEST_WORKFLOWS: FIXTURE, CAIRN_TEST_LEDGER: ledger, CAIRN_TEST_LEASE_MS: "300" },
    // Plays the operator: cancels the waiting run once it is suspended.
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

/** Ledger lines, in the order they were written: [what, idempotencyKey, attempt]. */
function ledgerLines(path: string): [string, string, number][] {
  if (!existsSync(path)) return [];
  return readFileSync(path, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const [what, key, attempt] = line.split(" ");
      return [what!, key!, Number(attempt)];
    });
}

/** Checks one journaled action (compensation or release) against the ledger; returns the ledger indexes of its executions. */
function checkAction(
  journal: JournalEntryView[],
  lines: [string, string, number][],
  what: string,
  key: string,
  opKey: string,
  intentKind: string,
  doneKind: string,
): number[] {
  const entries = journal.filter((e) => e.opKey === opKey && (e.kind === intentKind || e.kind === doneKind));
  const intents = entries.filter((e) => e.kind === intentKind).map((e) => (e.data as { attempt: number }).attempt);
  expect(
    entries.filter((e) => e.kind === doneKind),
    `${key} completes once`,
  ).toHaveLength(1);
  expect(entries.at(-1)?.kind, `${key}: nothing after its outcome`).toBe(doneKind);
  const runs = lines.flatMap((line, index) => (line[0] === what && line[1] === key ? [{ attempt: line[2], index }] : []));
  const attempts = runs.map((r) => r.attempt);
  expect(attempts.length, `${key} applied`).toBeGreaterThan(0);
  expect(new Set(attempts).size, `${key}: no attempt ran twice (${attempts})`).toBe(attempts.length);
  for (const attempt of attempts) expect(intents, `${key}: attempt ${attempt} ran without a durable intent`).toContain(attempt);
  expect(attempts.length, `${key}: re-run only after an interrupted intent`).toBeLessThanOrEqual(intents.length);
  return runs.map((r) => r.index);
}

/** Checks every run; returns how many journaled the flaky compensation's failure and retried it (rather than crashing mid-attempt). */
async function verify(s: Scenario, name: string): Promise<number> {
  let failedAndRetried = 0;
  const lines = ledgerLines(s.ledger);
  for (const runId of Object.keys(RUNS).map((id) => `${name}-${id}`)) {
    const run = await s.engine.getRun(runId);
    expect(run.status, runId).toBe("compensated");
    const journal = await s.engine.journal(runId);
    expect(journal.map((e) => e.seq)).toEqual(journal.map((_, i) => i + 1));
    expect(
      journal.filter((e) => e.kind === "saga.compensating"),
      `${runId} unwinds once`,
    ).toHaveLength(1);
    expect(journal.filter((e) => e.kind.startsWith("run.compensat"))).toHaveLength(1);
    // Compensations: each applied once per key, newest first — every execution of a newer leg's
    // compensation (retries included) before any execution of an older one.
    let previous = -1;
    for (const leg of [...(LEGS as string[])].reverse()) {
      const indexes = checkAction(
        journal,
        lines,
        "undo",
        `${runId}:book-${leg}#0:compensate`,
        `book-${leg}#0`,
        "compensation.started",
        "compensation.completed",
      );
      if (leg === FLAKY_LEG) {
        // Its first execution failed (no effect); the failure was journaled and retried after a back-off,
        // unless a SIGKILL cut that execution off before its outcome (then the intent is simply re-run).
        const failed = lines.flatMap((line, index) =>
          line[0] === "undo-failed" && line[1] === `${runId}:book-${leg}#0:compensate` ? [{ attempt: line[2], index }] : [],
        );
        expect(failed, `${runId}: book-${leg}'s compensation failed exactly once`).toHaveLength(1);
        const { attempt, index } = failed[0]!;
        expect(index, `${runId}: book-${leg}'s failing attempt came after the newer legs' compensations`).toBeGreaterThan(previous);
        expect(index, `${runId}: book-${leg}'s failing attempt came before its successful one`).toBeLessThan(Math.min(...indexes));
        const outcomes = journal.filter(
          (e) =>
            e.opKey === `book-${leg}#0` &&
            e.kind.startsWith("compensation.") &&
            e.kind !== "compensation.started" &&
            (e.data as { attempt: number }).attempt === attempt,
        );
        expect(
          outcomes.map((e) => [e.kind, (e.data as { final?: boolean }).final]),
          `${runId}: attempt ${attempt}'s outcome`,
        ).toEqual(outcomes.length === 0 ? [] : [["compensation.failed", false]]);
        if (outcomes.length > 0) failedAndRetried += 1;
      }
      expect(Math.min(...indexes), `${runId}: book-${leg} compensated after the legs booked later`).toBeGreaterThan(previous);
      previous = Math.max(...indexes);
    }
    // The resource: released once, after the compensations.
    const released = checkAction(journal, lines, "release", `${runId}:acquire:room#0:release`, "acquire:room#0", "resource.releasing", "resource.released");
    expect(Math.min(...released)).toBeGreaterThan(previous);
    // Steps never ran again during the unwinding's replays: each booked leg's attempts are distinct.
    for (const leg of LEGS as string[]) {
      const attempts = lines.filter((l) => l[0] === "do" && l[1] === `${runId}:book-${leg}#0`).map((l) => l[2]);
      expect(new Set(attempts).size, `${runId} book-${leg}`).toBe(attempts.length);
    }
  }
  return failedAndRetried;
}

describe.each(DURABLE_STORES)("saga crash tests on %s", (kind) => {
  const test = kind === "postgres" && !pgUp ? it.skip : it;

  test.each(SAGA_CRASH_POINTS)("SIGKILL at %s", async (point) => {
    const name = point;
    const s = await setUp(kind, name);
    // Compensation points crash on the flaky leg: its failed attempt, its back-off and its retry are crossed by SIGKILLs.
    const crashes = await crashAtPoint(s, point, point.includes("compensation") ? `book-${FLAKY_LEG as string}` : "");
    expect(crashes, `crash point ${point} was reached`).toBeGreaterThan(0);
    await finishCleanly(s);
    const failedAndRetried = await verify(s, name);
    // A crash right after the failing attempt's effect keeps that failure out of the journal (the intent is re-run
    // and succeeds); at the other points the first run to reach the flaky leg journals its failure, backs off and
    // retries with SIGKILLs around it (the other run may be cut off mid-attempt by a crash).
    if (point !== "after-compensation-effect") expect(failedAndRetried, "the failure was journaled and retried").toBeGreaterThanOrEqual(1);
  });

  test(
    "SIGKILL at random moments, compensations and releases slowed down",
    async () => {
      const s = await setUp(kind, "random");
      // Ten kills can all land before a slow (loaded) worker makes progress: that is ten failed recoveries,
      // and the default dead-letter limit would end the run. This test is about exactly-once, so no limit.
      s.env.CAIRN_TEST_MAX_RECOVERY = "0";
      const kills = await killAtRandom(s, { CAIRN_TEST_STEP_MS: "25" }, 10, 250);
      expect(kills).toBeGreaterThanOrEqual(1);
      await finishCleanly(s).catch(async (error: unknown) => {
        const runs = await Promise.all(Object.keys(RUNS).map((id) => s.engine.getRun(`random-${id}`)));
        throw new Error(`${(error as Error).message}; runs: ${runs.map((r) => `${r.runId} ${r.status} ${r.error?.code ?? ""}`).join(", ")}`);
      });
      await verify(s, "random");
    },
    RANDOM_KILLS_TIMEOUT_MS,
  );
});
