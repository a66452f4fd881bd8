import type Database from "better-sqlite3";
import type { EntryKind } from "../../core/journal.js";
import type { RunEntriesQuery, RunEntry } from "../../core/store.js";
import { runEntriesStart } from "../common/run-entries.js";
import { RUN_ENTRIES_SQL } from "./sqlite-run-entries-queries.js";

interface Row {
  runId: string;
  seq: number;
  kind: string;
  opKey: string | null;
  payload: string;
  epoch: number;
  at: number;
  workflow: string;
  parentRunId: string | null;
  createdAt: number;
}

const statements = new WeakMap<Database.Database, Database.Statement>();

/** {@link Store.listRunEntries} in SQLite: walks runs by the createdAt index, each run's entries by the journal's key. */
export function listRunEntries(db: Database.Database, query: RunEntriesQuery): RunEntry[] {
  const start = runEntriesStart(query);
  let statement = statements.get(db);
  if (!statement) statements.set(db, (statement = db.prepare(RUN_ENTRIES_SQL)));
  const rows = statement.all(start.createdAt, query.kind, start.createdAt, start.runId, start.seq, start.limit) as Row[];
  return rows.map((row) => ({
    entry: { runId: row.runId, seq: row.seq, kind: row.kind as EntryKind, opKey: row.opKey, payload: row.payload, epoch: row.epoch, at: row.at },
    workflow: row.workflow,
    parentRunId: row.parentRunId,
    createdAt: row.createdAt,
  }));
}
