import type { EntryKind } from "../../core/journal.js";
import type { RunEntriesQuery, RunEntry } from "../../core/store.js";
import { runEntriesStart } from "../common/run-entries.js";

/** {@link Store.listRunEntries} in PostgreSQL: runs by their createdAt index, each run's entries by the journal's key. */
export const RUN_ENTRIES_SQL = `SELECT j.run_id AS "runId", j.seq, j.kind, j.op_key AS "opKey", j.payload, j.epoch, j.at,
    r.workflow, r.parent_run_id AS "parentRunId", r.created_at AS "createdAt"
  FROM runs r JOIN journal j ON j.run_id = r.run_id
  WHERE r.created_at >= $1 AND j.kind = $2 AND (r.created_at, r.run_id, j.seq) > ($1, $3, $4)
  ORDER BY r.created_at, r.run_id, j.seq LIMIT $5`;

interface Row {
  runId: string;
  seq: number | string;
  kind: string;
  opKey: string | null;
  payload: string;
  epoch: number | string;
  at: number | string;
  workflow: string;
  parentRunId: string | null;
  createdAt: number | string;
}

/** The query's parameters, checked. */
export function runEntriesParams(query: RunEntriesQuery): unknown[] {
  const start = runEntriesStart(query);
  return [start.createdAt, query.kind, start.runId, start.seq, start.limit];
}

/** Rows of {@link RUN_ENTRIES_SQL} as {@link RunEntry}s. */
export function toRunEntries(rows: Row[]): RunEntry[] {
  return rows.map((row) => ({
    entry: {
      runId: row.runId,
      seq: Number(row.seq),
      kind: row.kind as EntryKind,
      opKey: row.opKey,
      payload: row.payload,
      epoch: Number(row.epoch),
      at: Number(row.at),
    },
    workflow: row.workflow,
    parentRunId: row.parentRunId,
    createdAt: Number(row.createdAt),
  }));
}
