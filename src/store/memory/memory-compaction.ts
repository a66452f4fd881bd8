import type { CompactionOutcome, CompactionPlan, JournalCompaction } from "../../core/compaction.js";
import { ValidationError } from "../../core/errors.js";
import type { JournalEntry } from "../../core/journal.js";
import { isCheckpoint } from "../../core/resume.js";
import type { CompactCandidate, CompactQuery } from "../../core/store.js";
import type { MemoryTables } from "./memory-tables.js";

// Journal compaction in the memory store (see `RetentionStore.compactJournal`).

/** See `Store.listCompactableRuns`. */
export function listCompactable(t: MemoryTables, query: CompactQuery): CompactCandidate[] {
  const after = query.afterRunId ?? "";
  const found: CompactCandidate[] = [];
  for (const runId of [...t.runs.keys()].filter((id) => id > after && (query.runId === undefined || id === query.runId)).sort()) {
    if (found.length >= query.limit) break;
    const checkedSeq = t.compactions.get(runId)?.checkedSeq ?? 0;
    const journal = t.journal.get(runId) ?? [];
    if (journal.some((entry) => entry.seq > checkedSeq && entry.at < query.checkpointBefore && isCheckpoint(entry.kind))) found.push({ runId, checkedSeq });
  }
  return found;
}

/** See `Store.compactJournal`, inside `t.atomic`. */
export function compactRows(t: MemoryTables, runId: string, plan: CompactionPlan, now: number): CompactionOutcome | undefined {
  return t.atomic(() => {
    if (!t.runs.has(runId)) return undefined;
    const journal = t.journal.get(runId) ?? [];
    const checkpoint = journal[indexOfSeq(journal, plan.checkpointSeq)];
    if (checkpoint?.seq !== plan.checkpointSeq || !isCheckpoint(checkpoint.kind)) {
      throw new ValidationError(`compactJournal: seq ${plan.checkpointSeq} of run "${runId}" is not a loop checkpoint; nothing was deleted.`);
    }
    const doomed = new Set(plan.seqs.filter((seq) => seq > 1 && seq < plan.checkpointSeq));
    const kept = journal.filter((entry) => !doomed.has(entry.seq));
    const removed = journal.filter((entry) => doomed.has(entry.seq));
    t.putIn(t.journal, runId, kept);
    for (const entry of removed) {
      const key = `${runId}\0${entry.seq}`;
      if (entry.kind === "step.completed" && t.texts.has(key)) t.putIn(t.compactedTextKeys, key, entry.opKey ?? "");
    }
    const before = t.compactions.get(runId);
    const bytes = removed.reduce((sum, entry) => sum + Buffer.byteLength(entry.payload), 0);
    const marker: JournalCompaction = {
      entries: (before?.entries ?? 0) + removed.length,
      bytes: (before?.bytes ?? 0) + bytes,
      coveredSeq: Math.max(before?.coveredSeq ?? 0, removed.length > 0 ? plan.checkpointSeq : 0),
      checkedSeq: Math.max(before?.checkedSeq ?? 0, plan.checkpointSeq),
      at: removed.length > 0 ? now : (before?.at ?? now),
    };
    t.putIn(t.compactions, runId, marker);
    const compaction = readMarker(t, runId);
    return { deleted: removed.length, bytes, ...(compaction ? { compaction } : {}) };
  });
}

/** See `Store.readCompaction`: the marker, once something was removed. */
export function readMarker(t: MemoryTables, runId: string): JournalCompaction | undefined {
  const marker = t.compactions.get(runId);
  return marker && marker.entries > 0 ? { ...marker } : undefined;
}

/** Stores a marker carried by an import or a fork, inside the caller's `t.atomic`. */
export function insertMarker(t: MemoryTables, runId: string, marker: JournalCompaction | undefined): void {
  if (marker) t.putIn(t.compactions, runId, { ...marker });
}

/** The index of the first entry with a seq at or above `seq` (journals are in seq order, with gaps once compacted). */
export function indexOfSeq(journal: readonly JournalEntry[], seq: number): number {
  let low = 0;
  let high = journal.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (journal[middle]!.seq < seq) low = middle + 1;
    else high = middle;
  }
  return low;
}
