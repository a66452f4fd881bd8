import type Database from "better-sqlite3";
import type { CompactionOutcome, CompactionPlan, JournalCompaction } from "../../core/compaction.js";
import { ValidationError } from "../../core/errors.js";
import type { CompactCandidate, CompactQuery } from "../../core/store.js";
import { CHECKPOINT_EXISTS, DELETE_SUPERSEDED, INSERT_MARKER, LIST_COMPACTABLE, READ_MARKER, RUN_EXISTS, UPSERT_MARKER } from "./sqlite-compaction-queries.js";

// Journal compaction on SQLite (see `RetentionStore.compactJournal`).

/** See `Store.listCompactableRuns`. */
export function listCompactable(db: Database.Database, query: CompactQuery): CompactCandidate[] {
  return db
    .prepare(LIST_COMPACTABLE)
    .all(query.afterRunId ?? "", query.runId ?? null, query.runId ?? null, query.checkpointBefore, Math.max(0, query.limit)) as CompactCandidate[];
}

/** See `Store.compactJournal`: one IMMEDIATE transaction, serialised with every writer of the file. */
export function compactRows(db: Database.Database, runId: string, plan: CompactionPlan, now: number): CompactionOutcome | undefined {
  return db
    .transaction(() => {
      if (db.prepare(RUN_EXISTS).get(runId) === undefined) return undefined;
      if (db.prepare(CHECKPOINT_EXISTS).get(runId, plan.checkpointSeq) === undefined) {
        throw new ValidationError(`compactJournal: seq ${plan.checkpointSeq} of run "${runId}" is not a loop checkpoint; nothing was deleted.`);
      }
      const deleted = db.prepare(DELETE_SUPERSEDED).all(runId, JSON.stringify(plan.seqs), plan.checkpointSeq) as { bytes: number | null }[];
      const bytes = deleted.reduce((sum, row) => sum + (row.bytes ?? 0), 0);
      db.prepare(UPSERT_MARKER).run(runId, deleted.length, bytes, deleted.length > 0 ? plan.checkpointSeq : 0, plan.checkpointSeq, now);
      const compaction = readMarker(db, runId);
      return { deleted: deleted.length, bytes, ...(compaction ? { compaction } : {}) };
    })
    .immediate();
}

/** See `Store.readCompaction`: the marker, once something was removed. */
export function readMarker(db: Database.Database, runId: string): JournalCompaction | undefined {
  const row = db.prepare(READ_MARKER).get(runId) as JournalCompaction | undefined;
  return row && row.entries > 0 ? { ...row } : undefined;
}

/** Stores a marker carried by an import or a fork, inside the caller's transaction. */
export function insertMarker(db: Database.Database, runId: string, marker: JournalCompaction | undefined): void {
  if (!marker) return;
  db.prepare(INSERT_MARKER).run(runId, marker.entries, marker.bytes, marker.coveredSeq, marker.checkedSeq, marker.at);
}
