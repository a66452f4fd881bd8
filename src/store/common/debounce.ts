import { newEntry, type JournalEntry } from "../../core/journal.js";
import type { RunRecord } from "../../core/run.js";
import { decodeStored } from "../../core/payloads.js";
import type { NewRun } from "../../core/store.js";
import { newRunEntries, newRunRecord } from "./run-state.js";

/** The `run.debounced` entry at `seq`: the run starts at `startAt` with `input` (encoded). */
function debouncedEntry(runId: string, seq: number, input: string, startAt: number, now: number): JournalEntry {
  const entry = newEntry("run.debounced", null, { input: decodeStored(input), startAt });
  return { runId, seq, kind: entry.kind, opKey: null, payload: entry.payload, epoch: 0, at: now };
}

/**
 * A new debounced run (see `Store.debounceRun`): `run.created`, then `run.debounced`; suspended until
 * `startAt`, never claimed (epoch 0).
 * @throws ValidationError when `run.input` is not an encoded payload.
 */
export function newDebouncedRun(run: NewRun, startAt: number, now: number): { record: RunRecord; entries: JournalEntry[] } {
  const { claimFor: _, ...plain } = run;
  const entries = newRunEntries(plain, now);
  const record = newRunRecord(plain, now);
  entries.push(debouncedEntry(run.runId, 2, run.input, startAt, now));
  return { record: { ...record, status: "suspended", wakeAt: startAt, lastSeq: 2 }, entries };
}

/** A debounced run that has not started, after another start with its key: new input, later start, one more entry. */
export function rebounce(existing: RunRecord, input: string, startAt: number, now: number): { run: RunRecord; entry: JournalEntry } {
  const seq = existing.lastSeq + 1;
  return { run: { ...existing, input, wakeAt: startAt, lastSeq: seq, updatedAt: now }, entry: debouncedEntry(existing.runId, seq, input, startAt, now) };
}
