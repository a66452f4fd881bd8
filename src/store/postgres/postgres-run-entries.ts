import type { EntryKind } from "../../core/journal.js";
import type { RunEntriesQuery, RunEntry } from "../../core/store.js";
import { runEntriesStart } from "../common/run-entries.js";

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

/** Rows of `RUN_ENTRIES_SQL` (postgres-run-entries-queries.ts) as {@link RunEntry}s. */
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
