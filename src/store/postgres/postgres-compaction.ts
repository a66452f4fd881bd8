import type { CompactionOutcome, CompactionPlan, JournalCompaction } from "../../core/compaction.js";
import { ValidationError } from "../../core/errors.js";
import type { CompactCandidate, CompactQuery } from "../../core/store.js";
import {
  CHECKPOINT_EXISTS,
  DELETE_SUPERSEDED,
  INSERT_MARKER,
  LIST_COMPACTABLE,
  LOCK_RUN_KEY,
  READ_MARKER,
  UPSERT_MARKER,
} from "./postgres-compaction-queries.js";
import type { Tx } from "./postgres-tx.js";

// Journal compaction on PostgreSQL (see `RetentionStore.compactJournal`).

/** Runs one statement outside a transaction (the store's pooled query), as `PgQuery` of postgres-retention.ts. */
type PgQuery = <R extends object>(text: string, values?: readonly unknown[]) => Promise<R[]>;

/** See `Store.listCompactableRuns`. */
export async function listCompactable(query: PgQuery, q: CompactQuery): Promise<CompactCandidate[]> {
  return query<CompactCandidate>(LIST_COMPACTABLE, [q.afterRunId ?? "", q.checkpointBefore, Math.max(0, q.limit), q.runId ?? null]);
}

/**
 * See `Store.compactJournal`, inside the caller's transaction. The run is locked FOR KEY SHARE: a
 * prune (FOR UPDATE) waits, the run's writer (which updates non-key columns) does not. Deleted rows
 * are counted from the DELETE itself, so two compactions racing count each entry once.
 */
export async function compactRows(tx: Tx, runId: string, plan: CompactionPlan, now: number): Promise<CompactionOutcome | undefined> {
  if ((await tx.query(LOCK_RUN_KEY, [runId])).length === 0) return undefined;
  if ((await tx.query(CHECKPOINT_EXISTS, [runId, plan.checkpointSeq])).length === 0) {
    throw new ValidationError(`compactJournal: seq ${plan.checkpointSeq} of run "${runId}" is not a loop checkpoint; nothing was deleted.`);
  }
  const deleted = await tx.query<{ bytes: number | null }>(DELETE_SUPERSEDED, [runId, plan.seqs, plan.checkpointSeq]);
  const bytes = deleted.reduce((sum, row) => sum + Number(row.bytes ?? 0), 0);
  await tx.query(UPSERT_MARKER, [runId, deleted.length, bytes, deleted.length > 0 ? plan.checkpointSeq : 0, plan.checkpointSeq, now]);
  const compaction = await readMarker(tx, runId);
  return { deleted: deleted.length, bytes, ...(compaction ? { compaction } : {}) };
}

/** See `Store.readCompaction`: the marker, once something was removed. */
export async function readMarker(tx: Pick<Tx, "query">, runId: string): Promise<JournalCompaction | undefined> {
  const [row] = await tx.query<JournalCompaction>(READ_MARKER, [runId]);
  return row && Number(row.entries) > 0
    ? { entries: Number(row.entries), bytes: Number(row.bytes), coveredSeq: Number(row.coveredSeq), checkedSeq: Number(row.checkedSeq), at: Number(row.at) }
    : undefined;
}

/** Stores a marker carried by an import or a fork, inside the caller's transaction. */
export async function insertMarker(tx: Pick<Tx, "query">, runId: string, marker: JournalCompaction | undefined): Promise<void> {
  if (!marker) return;
  await tx.query(INSERT_MARKER, [runId, marker.entries, marker.bytes, marker.coveredSeq, marker.checkedSeq, marker.at]);
}
