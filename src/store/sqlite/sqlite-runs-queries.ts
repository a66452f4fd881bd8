import { tagCondition } from "../common/live-sql.js";
import { SYSTEM_WORKFLOW_PREFIX, type RunStatus } from "../../core/run.js";
import type { ListRunsQuery, RunFilter } from "../../core/store.js";
import { likePattern, type RunCursor } from "../common/list-query.js";
import { RUN_COLUMNS, STATE_COLUMNS } from "./sqlite-rows.js";

// The statements of the runs table for the SQLite store (see sqlite-runs.ts): reading, inserting and updating run rows.

export const GET_STATE = `SELECT ${STATE_COLUMNS} FROM runs WHERE run_id = ?`;
/** What a plain append needs of its run's row (common/run-state `FenceState`). */
export const GET_FENCE = "SELECT status, lease_epoch AS leaseEpoch, last_seq AS lastSeq FROM runs WHERE run_id = ?";
export const GET_RUN = `SELECT ${RUN_COLUMNS} FROM runs WHERE run_id = ?`;
/** Bind with `runParams`. */
export const INSERT_RUN = `INSERT INTO runs (run_id, workflow, version, status, input, output, error, parent_run_id, parent_op_key, wake_at, waiting_for,
         lease_owner, lease_expires_at, lease_epoch, last_seq, wake_pending, created_at, updated_at, finished_at)
       VALUES (@runId, @workflow, @version, @status, @input, @output, @error, @parentRunId, @parentOpKey, @wakeAt, @waitingFor,
         @leaseOwner, @leaseExpiresAt, @leaseEpoch, @lastSeq, @wakePending, @createdAt, @updatedAt, @finishedAt)
       ON CONFLICT (run_id) DO NOTHING`;
/** Writes the mutable columns of a run; bind with `stateParams`. */
export const UPDATE_STATE = `UPDATE runs SET status = @status, output = @output, error = @error, wake_at = @wakeAt, waiting_for = @waitingFor,
         lease_owner = @leaseOwner, lease_expires_at = @leaseExpiresAt, lease_epoch = @leaseEpoch, last_seq = @lastSeq,
         wake_pending = @wakePending, updated_at = @updatedAt, finished_at = @finishedAt
       WHERE run_id = @runId`;
/**
 * Most appends (step intents and results) change nothing in the row but these two columns: leaving
 * the indexed ones out of the SET list spares SQLite rewriting three index entries per commit.
 */
export const ADVANCE_SEQ = "UPDATE runs SET last_seq = ?, updated_at = ? WHERE run_id = ?";
/** Runs per (workflow, status), for gauges. */
export const COUNT_RUNS = "SELECT workflow, status, COUNT(*) AS count FROM runs GROUP BY workflow, status ORDER BY workflow, status";

/** The WHERE conditions of a listing's filters, with their parameters. */
function runWhere(query: RunFilter, statuses: readonly RunStatus[]): { where: string[]; values: unknown[] } {
  const where: string[] = [];
  const values: unknown[] = [];
  if (statuses.length > 0) {
    where.push(`status IN (${statuses.map(() => "?").join(", ")})`);
    values.push(...statuses);
  }
  if (query.workflow !== undefined) {
    where.push("workflow = ?");
    values.push(query.workflow);
  } else if (query.excludeSystem === true) {
    // A per-row comparison, cheap beside the scan the listing or count makes anyway.
    where.push("substr(workflow, 1, ?) <> ?");
    values.push(SYSTEM_WORKFLOW_PREFIX.length, SYSTEM_WORKFLOW_PREFIX);
  }
  if (query.parentRunId === null) where.push("parent_run_id IS NULL");
  else if (query.parentRunId !== undefined) {
    where.push("parent_run_id = ?");
    values.push(query.parentRunId);
  }
  if (query.runIdPrefix !== undefined && query.runIdPrefix !== "") {
    // substr counts characters; `>=` lets SQLite start from the prefix in the run_id index.
    where.push("run_id >= ? AND substr(run_id, 1, ?) = ?");
    values.push(query.runIdPrefix, [...query.runIdPrefix].length, query.runIdPrefix);
  }
  if (query.q !== undefined && query.q !== "") {
    // LIKE ignores the case of ASCII letters; the error's message only (not its stack), when it is JSON.
    where.push(
      "(run_id LIKE ? ESCAPE '\\' OR workflow LIKE ? ESCAPE '\\' OR (CASE WHEN json_valid(error) THEN json_extract(error, '$.message') END) LIKE ? ESCAPE '\\'" +
        " OR input LIKE ? ESCAPE '\\' OR EXISTS (SELECT 1 FROM run_tags t WHERE t.run_id = runs.run_id AND (t.key || ':' || t.value) LIKE ? ESCAPE '\\'))",
    );
    const pattern = likePattern(query.q);
    values.push(pattern, pattern, pattern, pattern, pattern);
  }
  if (query.createdAfter !== undefined) {
    where.push("created_at > ?");
    values.push(query.createdAfter);
  }
  if (query.createdBefore !== undefined) {
    where.push("created_at < ?");
    values.push(query.createdBefore);
  }
  for (const [key, value] of Object.entries(query.tags ?? {})) {
    where.push(tagCondition("?", "?"));
    values.push(key, value);
  }
  return { where, values };
}

/** The listRuns query for these filters, with its parameters. */
export function listRunsQuery(
  query: ListRunsQuery,
  statuses: readonly RunStatus[],
  cursor: RunCursor | undefined,
  limit: number,
): { text: string; values: unknown[] } {
  const { where, values } = runWhere(query, statuses);
  if (cursor) {
    where.push("(created_at < ? OR (created_at = ? AND run_id < ?))");
    values.push(cursor.createdAt, cursor.createdAt, cursor.runId);
  }
  values.push(limit);
  const key = where.join(" AND ");
  return { text: `SELECT ${RUN_COLUMNS} FROM runs ${key ? `WHERE ${key}` : ""} ORDER BY created_at DESC, run_id DESC LIMIT ?`, values };
}

/** The countRuns query for these filters (grouped by workflow and status), with its parameters. */
export function countRunsQuery(query: RunFilter, statuses: readonly RunStatus[]): { text: string; values: unknown[] } {
  const { where, values } = runWhere(query, statuses);
  return {
    text: `SELECT workflow, status, COUNT(*) AS count FROM runs ${where.length ? `WHERE ${where.join(" AND ")}` : ""} GROUP BY workflow, status ORDER BY workflow, status`,
    values,
  };
}
