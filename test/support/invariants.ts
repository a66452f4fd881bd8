import { readFileSync, existsSync } from "node:fs";
import { expect } from "vitest";
import type { Engine, JournalEntryView } from "../../src/engine/engine.js";

/** Ledger lines "<idempotencyKey> <attempt>" grouped by key. */
export function readLedger(path: string): Map<string, number[]> {
  const byKey = new Map<string, number[]>();
  if (!existsSync(path)) return byKey;
  for (const line of readFileSync(path, "utf8").split("\n")) {
    if (!line) continue;
    const space = line.lastIndexOf(" ");
    const key = line.slice(0, space);
    const list = byKey.get(key) ?? [];
    list.push(Number(line.slice(space + 1)));
    byKey.set(key, list);
  }
  return byKey;
}

/**
 * Checks the replay-safety invariants of one finished run against the ledger:
 * every execution had a durable intent first, no (key, attempt) ran twice, each step
 * completed once and never started again after completing, each sleep armed and fired
 * once, each event consumed once, each loop started and completed once with snapshots moving forward.
 */
export async function checkRunInvariants(engine: Engine, runId: string, ledger: Map<string, number[]>): Promise<JournalEntryView[]> {
  const journal = await engine.journal(runId);
  const seqs = journal.map((e) => e.seq);
  expect(seqs).toEqual(seqs.map((_, i) => i + 1));
  const byKey = new Map<string, JournalEntryView[]>();
  for (const entry of journal) {
    if (!entry.opKey) continue;
    const list = byKey.get(entry.opKey) ?? [];
    list.push(entry);
    byKey.set(entry.opKey, list);
  }
  for (const [opKey, entries] of byKey) {
    const kinds = entries.map((e) => e.kind);
    if (kinds[0] === "step.started") {
      const completed = entries.filter((e) => e.kind === "step.completed");
      expect(completed, `${runId} ${opKey} completes once`).toHaveLength(1);
      expect(kinds.at(-1), `${runId} ${opKey} ends with its outcome`).toBe("step.completed");
      const intents = entries.filter((e) => e.kind === "step.started").map((e) => (e.data as { attempt: number }).attempt);
      const executions = ledger.get(`${runId}:${opKey}`) ?? [];
      expect(new Set(executions).size, `${runId} ${opKey}: no attempt ran twice (${executions})`).toBe(executions.length);
      for (const attempt of executions) expect(intents, `${runId} ${opKey}: attempt ${attempt} ran without a durable intent`).toContain(attempt);
      // Re-runs happen only when an attempt was interrupted: all but the last intent lack an outcome of their own.
      expect(executions.length, `${runId} ${opKey}: ran more often than it had intents`).toBeLessThanOrEqual(intents.length);
    }
    if (kinds[0] === "sleep.started") expect(kinds, `${runId} ${opKey}`).toEqual(["sleep.started", "sleep.completed"]);
    if (kinds[0] === "event.waiting") {
      expect(
        kinds.filter((k) => k === "event.received"),
        `${runId} ${opKey} consumed once`,
      ).toHaveLength(1);
      expect(
        kinds.filter((k) => k === "event.waiting"),
        `${runId} ${opKey} waits once`,
      ).toHaveLength(1);
    }
    if (kinds[0] === "value.recorded") expect(kinds).toEqual(["value.recorded"]);
    if (kinds[0] === "child.started") expect(kinds).toEqual(["child.started", "child.completed"]);
    if (kinds[0] === "loop.started") {
      expect(
        kinds.filter((k) => k === "loop.started"),
        `${runId} ${opKey} starts once`,
      ).toHaveLength(1);
      expect(
        kinds.filter((k) => k === "loop.completed"),
        `${runId} ${opKey} completes once`,
      ).toHaveLength(1);
      expect(kinds.at(-1), `${runId} ${opKey} ends with its result`).toBe("loop.completed");
      // Snapshots only move forward, and never twice at the same iteration.
      const iterations = entries.filter((e) => e.kind === "loop.snapshot").map((e) => (e.data as { iteration: number }).iteration);
      expect(iterations, `${runId} ${opKey} snapshots`).toEqual([...new Set(iterations)].sort((a, b) => a - b));
    }
  }
  return journal;
}
