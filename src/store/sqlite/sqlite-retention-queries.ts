import { PRUNABLE_SQL } from "../common/retention-sql.js";
import { ENTRY_COLUMNS, HUMAN_COLUMNS, INBOX_COLUMNS, RUN_COLUMNS } from "./sqlite-rows.js";

// The statements of pruning, export and import for the SQLite store (see sqlite-retention.ts).

/** Finished before, statuses (a JSON array), workflow twice (NULL: any), limit. */
export const LIST_PRUNABLE = `SELECT ${RUN_COLUMNS} FROM runs r
       WHERE r.finished_at IS NOT NULL AND r.finished_at < ? AND r.status IN (SELECT value FROM json_each(?))
         AND (? IS NULL OR r.workflow = ?) AND ${PRUNABLE_SQL}
       ORDER BY r.finished_at, r.run_id LIMIT ?`;

/** The run (id, last seq) still unchanged and prunable. */
export const STILL_PRUNABLE = `SELECT 1 FROM runs r WHERE r.run_id = ? AND r.last_seq = ? AND ${PRUNABLE_SQL}`;

/** Deletes the rows of the runs named in a JSON array from one per-run table (see `PER_RUN_TABLES`). */
export const deleteRunsFrom = (table: string): string => `DELETE FROM ${table} WHERE run_id IN (SELECT value FROM json_each(?))`;

export const READ_RUN = `SELECT ${RUN_COLUMNS} FROM runs WHERE run_id = ?`;
export const READ_RUN_JOURNAL = `SELECT ${ENTRY_COLUMNS} FROM journal WHERE run_id = ? ORDER BY seq`;
export const READ_RUN_INBOX = `SELECT ${INBOX_COLUMNS} FROM inbox WHERE run_id = ? ORDER BY id`;
export const READ_RUN_HUMANS = `SELECT ${HUMAN_COLUMNS} FROM human_requests WHERE run_id = ? ORDER BY created_at, request_id`;

export const RUN_EXISTS = "SELECT 1 FROM runs WHERE run_id = ?";
export const HUMAN_REQUEST_EXISTS = "SELECT 1 FROM human_requests WHERE request_id = ?";

export const IMPORT_RUN = `INSERT INTO runs (run_id, workflow, version, status, input, output, error, parent_run_id, parent_op_key, wake_at, waiting_for,
         lease_owner, lease_expires_at, lease_epoch, last_seq, wake_pending, created_at, updated_at, finished_at)
       VALUES (@runId, @workflow, @version, @status, @input, @output, @error, @parentRunId, @parentOpKey, @wakeAt, @waitingFor,
         @leaseOwner, @leaseExpiresAt, @leaseEpoch, @lastSeq, @wakePending, @createdAt, @updatedAt, @finishedAt)`;
export const IMPORT_ENTRY = "INSERT INTO journal (run_id, seq, kind, op_key, payload, epoch, at) VALUES (?, ?, ?, ?, ?, ?, ?)";
export const IMPORT_INBOX = "INSERT INTO inbox (run_id, type, event_id, payload, consumed_seq, received_at) VALUES (?, ?, ?, ?, ?, ?)";
export const IMPORT_HUMAN = `INSERT INTO human_requests (request_id, run_id, op_key, question, options, status, answer, timeout_at, created_at, answered_at, context, closed_reason)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;
export const IMPORT_JOURNAL_TEXT = "INSERT INTO journal_text (body, run_id, seq, op_key) VALUES (?, ?, ?, ?)";
