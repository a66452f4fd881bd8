import type Database from "better-sqlite3";
import { IMPORT_CONFLICT_HINT, RunConflictError } from "../../core/errors.js";
import type { RunRecord } from "../../core/run.js";
import { TERMINAL_STATUSES } from "../../core/run.js";
import type { CompactionOutcome, CompactionPlan, JournalCompaction } from "../../core/compaction.js";
import type { CompactCandidate, CompactQuery, PruneQuery, RetentionStore, RunImport } from "../../core/store.js";
import { compactRows, insertMarker, listCompactable, readMarker } from "./sqlite-compaction.js";
import { humanRequestRow } from "../common/plan-write.js";
import { agentRowsOfEntries } from "../common/agent-rows.js";
import { SqliteAgentRows } from "./sqlite-agent-rows.js";
import { journalTexts, PER_RUN_TABLES } from "../common/retention-sql.js";
import {
  deleteRunsFrom,
  HUMAN_REQUEST_EXISTS,
  IMPORT_ENTRY,
  IMPORT_HUMAN,
  IMPORT_INBOX,
  IMPORT_JOURNAL_TEXT,
  IMPORT_RUN,
  LIST_PRUNABLE,
  READ_RUN,
  READ_RUN_HUMANS,
  READ_RUN_INBOX,
  READ_RUN_JOURNAL,
  RUN_EXISTS,
  STILL_PRUNABLE,
} from "./sqlite-retention-queries.js";
import { runParams, toEntry, toHuman, toRun, type EntryRow, type HumanRow, type InboxRow, type StateRow } from "./sqlite-rows.js";
import type { SqliteConnection } from "./sqlite-connection.js";

/** The {@link RetentionStore} part of {@link SqliteStore}: pruning finished runs, and moving runs between stores. */
export class SqliteRetention implements RetentionStore {
  constructor(private readonly c: SqliteConnection) {}

  /** See {@link Store.listPrunableRuns}. */
  async listPrunableRuns(query: PruneQuery): Promise<RunRecord[]> {
    void this.c.q; // checks the schema version first
    return listPrunable(this.c.db, query);
  }

  /** See {@link Store.deleteRuns}. */
  async deleteRuns(runs: readonly { runId: string; lastSeq: number }[]): Promise<string[]> {
    void this.c.q;
    return deleteRunRows(this.c.db, runs);
  }

  /** See {@link Store.readRunRows}. */
  async readRunRows(runId: string): Promise<RunImport | undefined> {
    void this.c.q;
    return readRows(this.c.db, runId);
  }

  /** See {@link Store.importRun}. */
  async importRun(data: RunImport): Promise<void> {
    void this.c.q;
    importRows(this.c.db, data);
  }

  /** See {@link Store.listCompactableRuns}. */
  async listCompactableRuns(query: CompactQuery): Promise<CompactCandidate[]> {
    void this.c.q;
    return listCompactable(this.c.db, query);
  }

  /** See {@link Store.compactJournal}. */
  async compactJournal(runId: string, plan: CompactionPlan, now: number): Promise<CompactionOutcome | undefined> {
    void this.c.q;
    return compactRows(this.c.db, runId, plan, now);
  }

  /** See {@link Store.readCompaction}. */
  async readCompaction(runId: string): Promise<JournalCompaction | undefined> {
    void this.c.q;
    return readMarker(this.c.db, runId);
  }
}

/** See `Store.listPrunableRuns`; served by `runs_finished_idx` (migration 0012). */
export function listPrunable(db: Database.Database, query: PruneQuery): RunRecord[] {
  const statuses = query.statuses.filter((s) => TERMINAL_STATUSES.includes(s));
  if (statuses.length === 0) return [];
  const rows = db
    .prepare(LIST_PRUNABLE)
    .all(query.finishedBefore, JSON.stringify(statuses), query.workflow ?? null, query.workflow ?? null, Math.max(0, query.limit)) as (StateRow & {
    input: string;
  })[];
  return rows.map(toRun);
}

/** See `Store.deleteRuns`: one IMMEDIATE transaction for the batch, each run re-checked inside it. */
export function deleteRunRows(db: Database.Database, runs: readonly { runId: string; lastSeq: number }[]): string[] {
  const check = db.prepare(STILL_PRUNABLE).pluck();
  const deletes = [...PER_RUN_TABLES, "runs"].map((table) => db.prepare(deleteRunsFrom(table)));
  const apply = db.transaction(() => {
    const doomed = runs.filter(({ runId, lastSeq }) => check.get(runId, lastSeq) !== undefined).map((run) => run.runId);
    if (doomed.length === 0) return doomed;
    const ids = JSON.stringify(doomed);
    for (const statement of deletes) statement.run(ids);
    return doomed;
  });
  return apply.immediate();
}

/** See `Store.readRunRows`: one read transaction, so the rows are one consistent picture. */
export function readRows(db: Database.Database, runId: string): RunImport | undefined {
  return db.transaction(() => {
    const row = db.prepare(READ_RUN).get(runId) as (StateRow & { input: string }) | undefined;
    if (!row) return undefined;
    const journal = (db.prepare(READ_RUN_JOURNAL).all(runId) as EntryRow[]).map(toEntry);
    const inbox = (db.prepare(READ_RUN_INBOX).all(runId) as InboxRow[]).map(({ id: _, ...event }) => event);
    const humanRequests = (db.prepare(READ_RUN_HUMANS).all(runId) as HumanRow[]).map(toHuman);
    const compaction = readMarker(db, runId);
    return { run: toRun(row), journal, inbox, humanRequests, ...(compaction ? { compaction } : {}) };
  })();
}

/** See `Store.importRun`: one IMMEDIATE transaction; any error rolls all of it back. */
export function importRows(db: Database.Database, data: RunImport): void {
  const { run } = data;
  db.transaction(() => {
    if (db.prepare(RUN_EXISTS).get(run.runId) !== undefined) {
      throw new RunConflictError(run.runId, "in this store", IMPORT_CONFLICT_HINT);
    }
    const human = db.prepare(HUMAN_REQUEST_EXISTS);
    for (const request of data.humanRequests) {
      if (human.get(request.requestId) !== undefined) {
        throw new RunConflictError(run.runId, `cannot be imported: human request "${request.requestId}" exists in this store`, IMPORT_CONFLICT_HINT);
      }
    }
    db.prepare(IMPORT_RUN).run(runParams(run));
    const entry = db.prepare(IMPORT_ENTRY);
    for (const e of data.journal) entry.run(run.runId, e.seq, e.kind, e.opKey, e.payload, e.epoch, e.at);
    const inbox = db.prepare(IMPORT_INBOX);
    for (const e of data.inbox) inbox.run(run.runId, e.type, e.eventId, e.payload, e.consumedSeq, e.receivedAt);
    const request = db.prepare(IMPORT_HUMAN);
    for (const r of data.humanRequests) request.run(...humanRequestRow({ ...r, runId: run.runId }));
    const text = db.prepare(IMPORT_JOURNAL_TEXT);
    for (const t of journalTexts(data.journal)) text.run(t.text, run.runId, t.seq, t.opKey);
    insertMarker(db, run.runId, data.compaction);
    const agentRows = new SqliteAgentRows(db);
    for (const rows of agentRowsOfEntries(run.runId, data.journal)) agentRows.apply(rows);
  }).immediate();
}
