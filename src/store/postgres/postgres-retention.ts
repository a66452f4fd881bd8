import { IMPORT_CONFLICT_HINT, RunConflictError } from "../../core/errors.js";
import { isTerminal, TERMINAL_STATUSES, type RunRecord } from "../../core/run.js";
import type { PruneQuery, RetentionStore, RunImport } from "../../core/store.js";
import { humanRequestRow } from "../common/plan-write.js";
import { agentRowsOfEntries } from "../common/agent-rows.js";
import { applyAgentRows } from "./postgres-agent-rows.js";
import { journalTexts, PER_RUN_TABLES, PRUNABLE_SQL } from "../common/retention-sql.js";
import type { PostgresConnection } from "./postgres-connection.js";
import { INSERT_RUN } from "./postgres-runs-queries.js";
import {
  ENTRY_COLUMNS,
  HUMAN_COLUMNS,
  INBOX_COLUMNS,
  RUN_COLUMNS,
  entryArrays,
  runValues,
  toEntry,
  toHuman,
  toRun,
  type EntryRow,
  type HumanRow,
  type InboxRow,
  type StateRow,
} from "./postgres-rows.js";
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
}

/** Runs one statement outside a transaction (the store's pooled query). */
export type PgQuery = <R extends object>(text: string, values?: readonly unknown[]) => Promise<R[]>;

/** See `Store.listPrunableRuns`; served by `runs_finished_idx` (migration 0012). */
export async function listPrunable(query: PgQuery, q: PruneQuery): Promise<RunRecord[]> {
  const statuses = q.statuses.filter((s) => TERMINAL_STATUSES.includes(s));
  if (statuses.length === 0) return [];
  const rows = await query<StateRow & { input: string }>(
    `SELECT ${RUN_COLUMNS} FROM runs r
     WHERE r.finished_at IS NOT NULL AND r.finished_at < $1 AND r.status = ANY($2::text[]) AND ($3::text IS NULL OR r.workflow = $3) AND ${PRUNABLE_SQL}
     ORDER BY r.finished_at, r.run_id LIMIT $4`,
    [q.finishedBefore, statuses, q.workflow ?? null, Math.max(0, q.limit)],
  );
  return rows.map(toRun);
}

/**
 * See `Store.deleteRuns`. Locks the runs, their parents and their children (in run_id order, like every
 * other writer) before checking them, so a retry of any of them either committed before the check
 * (and is seen) or waits until the delete committed.
 */
export async function deleteRunRows(tx: Tx, runs: readonly { runId: string; lastSeq: number }[]): Promise<string[]> {
  const ids = runs.map((r) => r.runId);
  await tx.query(
    `SELECT run_id FROM runs
     WHERE run_id = ANY($1::text[]) OR parent_run_id = ANY($1::text[])
        OR run_id IN (SELECT parent_run_id FROM runs WHERE run_id = ANY($1::text[]) AND parent_run_id IS NOT NULL)
     ORDER BY run_id FOR UPDATE`,
    [ids],
  );
  const doomed = (
    await tx.query<{ runId: string }>(
      `SELECT r.run_id AS "runId" FROM runs r JOIN unnest($1::text[], $2::bigint[]) AS t(run_id, last_seq) ON t.run_id = r.run_id
       WHERE r.last_seq = t.last_seq AND ${PRUNABLE_SQL} ORDER BY r.run_id`,
      [ids, runs.map((r) => r.lastSeq)],
    )
  ).map((row) => row.runId);
  if (doomed.length === 0) return doomed;
  for (const table of [...PER_RUN_TABLES, "runs"]) await tx.query(`DELETE FROM ${table} WHERE run_id = ANY($1::text[])`, [doomed]);
  return doomed;
}

/** See `Store.readRunRows`: one REPEATABLE READ-like picture inside the caller's transaction. */
export async function readRows(tx: Tx, runId: string): Promise<RunImport | undefined> {
  const [row] = await tx.query<StateRow & { input: string }>(`SELECT ${RUN_COLUMNS} FROM runs WHERE run_id = $1 FOR SHARE`, [runId]);
  if (!row) return undefined;
  const journal = (await tx.query<EntryRow>(`SELECT ${ENTRY_COLUMNS} FROM journal WHERE run_id = $1 ORDER BY seq`, [runId])).map(toEntry);
  const inbox = (await tx.query<InboxRow>(`SELECT ${INBOX_COLUMNS} FROM inbox WHERE run_id = $1 ORDER BY id`, [runId])).map(({ id: _, ...event }) => event);
  const humanRequests = (
    await tx.query<HumanRow>(`SELECT ${HUMAN_COLUMNS} FROM human_requests WHERE run_id = $1 ORDER BY created_at, request_id`, [runId])
  ).map(toHuman);
  return { run: toRun(row), journal, inbox, humanRequests };
}

/** See `Store.importRun`, inside the caller's transaction: any error rolls all of it back. */
export async function importRows(tx: Tx, data: RunImport): Promise<void> {
  const { run } = data;
  const inserted = await tx.query(INSERT_RUN, runValues(run));
  if (inserted.length === 0) throw new RunConflictError(run.runId, "in this store", IMPORT_CONFLICT_HINT);
  const taken = await tx.query<{ id: string }>(`SELECT request_id AS id FROM human_requests WHERE request_id = ANY($1::text[]) LIMIT 1`, [
    data.humanRequests.map((r) => r.requestId),
  ]);
  if (taken[0]) {
    throw new RunConflictError(run.runId, `cannot be imported: human request "${taken[0].id}" exists in this store`, IMPORT_CONFLICT_HINT);
  }
  await tx.query(
    `INSERT INTO journal (run_id, seq, kind, op_key, payload, epoch, at)
     SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::bigint[])`,
    entryArrays(data.journal.map((e) => ({ ...e, runId: run.runId }))),
  );
  tx.journaled([run.runId]);
  for (const e of data.inbox) {
    await tx.query(`INSERT INTO inbox (run_id, type, event_id, payload, consumed_seq, received_at) VALUES ($1, $2, $3, $4, $5, $6)`, [
      run.runId,
      e.type,
      e.eventId,
      e.payload,
      e.consumedSeq,
      e.receivedAt,
    ]);
  }
  for (const r of data.humanRequests) {
    await tx.query(
      `INSERT INTO human_requests (request_id, run_id, op_key, question, options, status, answer, timeout_at, created_at, answered_at, context, closed_reason)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
      humanRequestRow({ ...r, runId: run.runId }),
    );
  }
  for (const t of journalTexts(data.journal)) {
    await tx.query("INSERT INTO journal_text (run_id, seq, op_key, body) VALUES ($1, $2, $3, $4)", [run.runId, t.seq, t.opKey, t.text]);
  }
  for (const rows of agentRowsOfEntries(data.run.runId, data.journal)) await applyAgentRows(tx, rows);
  // A live run imported may be runnable now: wake the workers of every process, as a start does.
  if (!isTerminal(run.status)) tx.wake();
}
