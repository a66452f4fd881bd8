import { expect } from "vitest";
import type { Engine, JournalEntryView } from "../../../src/engine/engine.js";
import { checkRunInvariants } from "../../support/invariants.js";

/**
 * One writer per run (DESIGN §3.5): every entry carries the epoch of the latest `run.claimed`
 * before it (0 before the first claim), and claims strictly raise the epoch. An entry from an
 * older epoch after a newer claim is exactly a stale write that the store accepted.
 */
export function checkFencing(runId: string, journal: JournalEntryView[]): void {
  let epoch = 0;
  for (const entry of journal) {
    if (entry.kind === "run.claimed") {
      const claimed = (entry.data as { epoch: number }).epoch;
      expect(entry.epoch, `${runId} seq ${entry.seq}: run.claimed carries its epoch`).toBe(claimed);
      expect(claimed, `${runId} seq ${entry.seq}: a claim raises the epoch`).toBeGreaterThan(epoch);
      epoch = claimed;
    } else {
      expect(
        entry.epoch,
        `${runId} seq ${entry.seq} (${entry.kind} ${entry.opKey ?? ""}): written by epoch ${entry.epoch} while epoch ${epoch} held the run`,
      ).toBe(epoch);
    }
  }
}

/**
 * Everything the chaos tests prove of one finished run: the replay-safety invariants against the
 * ledger (no attempt ran twice, every execution had a durable intent, each step completed once and
 * never ran after its outcome was committed, sleeps and waits resolved once) and fencing.
 */
export async function checkRun(engine: Engine, runId: string, ledger: Map<string, number[]>): Promise<JournalEntryView[]> {
  checkFencing(runId, await engine.journal(runId));
  const journal = await checkRunInvariants(engine, runId, ledger);
  expect(
    journal.filter((e) => e.kind === "run.completed"),
    `${runId} completes once`,
  ).toHaveLength(1);
  expect(journal.at(-1)?.kind, `${runId} ends completed`).toBe("run.completed");
  return journal;
}
