import { PRUNABLE_SQL } from "../common/retention-sql.js";
import { ENTRY_COLUMNS, HUMAN_COLUMNS, INBOX_COLUMNS, RUN_COLUMNS } from "./postgres-rows.js";

// The statements of pruning, export and import for the PostgreSQL store (see postgres-retention.ts).
// Plain texts (not named `Sql`): they run rarely, so `pg` does not keep them prepared.

/** $1 finished before, $2 statuses, $3 workflow (NULL: any), $4 limit. */
export const LIST_PRUNABLE = `SELECT ${RUN_COLUMNS} FROM runs r
     WHERE r.finished_at IS NOT NULL AND r.finished_at < $1 AND r.status = ANY($2::text[]) AND ($3::text IS NULL OR r.workflow = $3) AND ${PRUNABLE_SQL}
     ORDER BY r.finished_at, r.run_id LIMIT $4`;

/** Locks the runs $1, their parents and their children, in run_id order. */
export const LOCK_PRUNED_FAMILY = `SELECT run_id FROM runs
     WHERE run_id = ANY($1::text[]) OR parent_run_id = ANY($1::text[])
        OR run_id IN (SELECT parent_run_id FROM runs WHERE run_id = ANY($1::text[]) AND parent_run_id IS NOT NULL)
     ORDER BY run_id FOR UPDATE`;

/** The runs of $1 (with last seqs $2) still unchanged and prunable. */
export const STILL_PRUNABLE = `SELECT r.run_id AS "runId" FROM runs r JOIN unnest($1::text[], $2::bigint[]) AS t(run_id, last_seq) ON t.run_id = r.run_id
       WHERE r.last_seq = t.last_seq AND ${PRUNABLE_SQL} ORDER BY r.run_id`;

/** Deletes the rows of runs $1 from one per-run table (see `PER_RUN_TABLES`). */
export const deleteRunsFrom = (table: string): string => `DELETE FROM ${table} WHERE run_id = ANY($1::text[])`;

export const READ_RUN_FOR_SHARE = `SELECT ${RUN_COLUMNS} FROM runs WHERE run_id = $1 FOR SHARE`;
export const READ_RUN_JOURNAL = `SELECT ${ENTRY_COLUMNS} FROM journal WHERE run_id = $1 ORDER BY seq`;
export const READ_RUN_INBOX = `SELECT ${INBOX_COLUMNS} FROM inbox WHERE run_id = $1 ORDER BY id`;
export const READ_RUN_HUMANS = `SELECT ${HUMAN_COLUMNS} FROM human_requests WHERE run_id = $1 ORDER BY created_at, request_id`;

/** The first of the human request ids $1 that this store already holds. */
export const TAKEN_HUMAN_REQUEST = `SELECT request_id AS id FROM human_requests WHERE request_id = ANY($1::text[]) LIMIT 1`;

export const IMPORT_JOURNAL = `INSERT INTO journal (run_id, seq, kind, op_key, payload, epoch, at)
     SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::bigint[])`;
export const IMPORT_INBOX = `INSERT INTO inbox (run_id, type, event_id, payload, consumed_seq, received_at) VALUES ($1, $2, $3, $4, $5, $6)`;
export const IMPORT_HUMAN = `INSERT INTO human_requests (request_id, run_id, op_key, question, options, status, answer, timeout_at, created_at, answered_at, context, closed_reason)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`;
export const IMPORT_JOURNAL_TEXT = "INSERT INTO journal_text (run_id, seq, op_key, body) VALUES ($1, $2, $3, $4)";
