import { IMPORT_CONFLICT_HINT, RunConflictError } from "../../core/errors.js";
import { isTerminal, TERMINAL_STATUSES, type RunRecord } from "../../core/run.js";
import type { CompactionOutcome, CompactionPlan, JournalCompaction } from "../../core/compaction.js";
import type { CompactCandidate, CompactQuery, PruneQuery, RetentionStore, RunImport } from "../../core/store.js";
import { compactRows, insertMarker, listCompactable, readMarker } from "./postgres-compaction.js";
import { humanRequestRow } from "../common/plan-write.js";
import { agentRowsOfEntries } from "../common/agent-rows.js";
import { applyAgentRows } from "./postgres-agent-rows.js";
import { journalTexts, PER_RUN_TABLES } from "../common/retention-sql.js";
import type { PostgresConnection } from "./postgres-connection.js";
import { INSERT_RUN } from "./postgres-runs-queries.js";
import {
  deleteRunsFrom,
  IMPORT_HUMAN,
  IMPORT_INBOX,
  IMPORT_JOURNAL,
  IMPORT_JOURNAL_TEXT,
  LIST_PRUNABLE,
  LOCK_PRUNED_FAMILY,
  READ_RUN_FOR_SHARE,
  READ_RUN_HUMANS,
  READ_RUN_INBOX,
  READ_RUN_JOURNAL,
  STILL_PRUNABLE,
  TAKEN_HUMAN_REQUEST,
} from "./postgres-retention-queries.js";
import { entryArrays, runValues, toEntry, toHuman, toRun, type EntryRow, type HumanRow, type InboxRow, type StateRow } from "./postgres-rows.js";
import type { Tx } from "./postgres-tx.js";

/** The {@link RetentionStore} part of {@link PostgresStore}: pruning finished runs, and moving runs between stores. */
export class PostgresRetention implements RetentionStore {
  constructor(private readonly db: PostgresConnection) {}

  /** See {@link Store.listPrunableRuns}. */
  async listPrunableRuns(query: PruneQuery): Promise<RunRecord[]> {
    return listPrunable((text, values) => this.db.query(text, values), query);
  }

  /** See {@link Store.deleteRuns}. */
  async deleteRuns(runs: readonly { runId: string; lastSeq: number }[]): Promise<string[]> {
    if (runs.length === 0) return [];
    return this.db.tx(0, (tx) => deleteRunRows(tx, runs));
  }

  /** See {@link Store.readRunRows}. */
  async readRunRows(runId: string): Promise<RunImport | undefined> {
    return this.db.tx(0, (tx) => readRows(tx, runId));
  }

  /** See {@link Store.importRun}. */
  async importRun(data: RunImport): Promise<void> {
    await this.db.tx(0, (tx) => importRows(tx, data));
  }

  /** See {@link Store.listCompactableRuns}. */
  async listCompactableRuns(query: CompactQuery): Promise<CompactCandidate[]> {
    return listCompactable((text, values) => this.db.query(text, values), query);
  }

  /** See {@link Store.compactJournal}. */
  async compactJournal(runId: string, plan: CompactionPlan, now: number): Promise<CompactionOutcome | undefined> {
    return this.db.tx(0, (tx) => compactRows(tx, runId, plan, now));
  }

  /** See {@link Store.readCompaction}. */
  async readCompaction(runId: string): Promise<JournalCompaction | undefined> {
    return readMarker({ query: (text, values) => this.db.query(text, values) }, runId);
  }
}

/** Runs one statement outside a transaction (the store's pooled query). */
export type PgQuery = <R extends object>(text: string, values?: readonly unknown[]) => Promise<R[]>;

/** See `Store.listPrunableRuns`; served by `runs_finished_idx` (migration 0012). */
export async function listPrunable(query: PgQuery, q: PruneQuery): Promise<RunRecord[]> {
  const statuses = q.statuses.filter((s) => TERMINAL_STATUSES.includes(s));
  if (statuses.length === 0) return [];
  const rows = await query<StateRow & { input: string }>(LIST_PRUNABLE, [q.finishedBefore, statuses, q.workflow ?? null, Math.max(0, q.limit)]);
  return rows.map(toRun);
}

/**
 * See `Store.deleteRuns`. Locks the runs, their parents and their children (in run_id order, like every
 * other writer) before checking them, so a retry of any of them either committed before the check
 * (and is seen) or waits until the delete committed.
 */
export async function deleteRunRows(tx: Tx, runs: readonly { runId: string; lastSeq: number }[]): Promise<string[]> {
  const ids = runs.map((r) => r.runId);
  await tx.query(LOCK_PRUNED_FAMILY, [ids]);
  const doomed = (await tx.query<{ runId: string }>(STILL_PRUNABLE, [ids, runs.map((r) => r.lastSeq)])).map((row) => row.runId);
  if (doomed.length === 0) return doomed;
  for (const table of [...PER_RUN_TABLES, "runs"]) await tx.query(deleteRunsFrom(table), [doomed]);
  return doomed;
}

/** See `Store.readRunRows`: one REPEATABLE READ-like picture inside the caller's transaction. */
export async function readRows(tx: Tx, runId: string): Promise<RunImport | undefined> {
  const [row] = await tx.query<StateRow & { input: string }>(READ_RUN_FOR_SHARE, [runId]);
  if (!row) return undefined;
  const journal = (await tx.query<EntryRow>(READ_RUN_JOURNAL, [runId])).map(toEntry);
  const inbox = (await tx.query<InboxRow>(READ_RUN_INBOX, [runId])).map(({ id: _, ...event }) => event);
  const humanRequests = (await tx.query<HumanRow>(READ_RUN_HUMANS, [runId])).map(toHuman);
  const compaction = await readMarker(tx, runId);
  return { run: toRun(row), journal, inbox, humanRequests, ...(compaction ? { compaction } : {}) };
}

/** See `Store.importRun`, inside the caller's transaction: any error rolls all of it back. */
export async function importRows(tx: Tx, data: RunImport): Promise<void> {
  const { run } = data;
  const inserted = await tx.query(INSERT_RUN, runValues(run));
  if (inserted.length === 0) throw new RunConflictError(run.runId, "in this store", IMPORT_CONFLICT_HINT);
  const taken = await tx.query<{ id: string }>(TAKEN_HUMAN_REQUEST, [data.humanRequests.map((r) => r.requestId)]);
  if (taken[0]) {
    throw new RunConflictError(run.runId, `cannot be imported: human request "${taken[0].id}" exists in this store`, IMPORT_CONFLICT_HINT);
  }
  await tx.query(IMPORT_JOURNAL, entryArrays(data.journal.map((e) => ({ ...e, runId: run.runId }))));
  tx.journaled([run.runId]);
  for (const e of data.inbox) {
    await tx.query(IMPORT_INBOX, [run.runId, e.type, e.eventId, e.payload, e.consumedSeq, e.receivedAt]);
  }
  await insertMarker(tx, run.runId, data.compaction);
  for (const r of data.humanRequests) {
    await tx.query(IMPORT_HUMAN, humanRequestRow({ ...r, runId: run.runId }));
  }
  for (const t of journalTexts(data.journal)) {
    await tx.query(IMPORT_JOURNAL_TEXT, [run.runId, t.seq, t.opKey, t.text]);
  }
  for (const rows of agentRowsOfEntries(data.run.runId, data.journal)) await applyAgentRows(tx, rows);
  // A live run imported may be runnable now: wake the workers of every process, as a start does.
  if (!isTerminal(run.status)) tx.wake();
}
