import { tagCondition } from "../common/live-sql.js";
import { SYSTEM_WORKFLOW_PREFIX, type RunStatus } from "../../core/run.js";
import type { ListRunsQuery, RunFilter } from "../../core/store.js";
import { likePattern, type RunCursor } from "../common/list-query.js";
import { RUN_COLUMNS, STATE_COLUMNS, stateColumns } from "./postgres-rows.js";
import { sql } from "./postgres-queries.js";

// The statements of the runs table for the PostgreSQL store (see postgres-runs.ts): reading, locking, inserting and updating run rows.

export const GET_STATE = sql("get_state", `SELECT ${STATE_COLUMNS} FROM runs WHERE run_id = $1`);
export const GET_RUN = sql("get_run", `SELECT ${RUN_COLUMNS} FROM runs WHERE run_id = $1`);
export const GET_RUNS = sql("get_runs", `SELECT ${RUN_COLUMNS} FROM runs WHERE run_id = ANY($1::text[])`);
/** Locks runs in run_id order, so two transactions locking overlapping sets never deadlock on them. */
export const LOCK_STATES = sql("lock_states", `SELECT ${STATE_COLUMNS} FROM runs WHERE run_id = ANY($1::text[]) ORDER BY run_id FOR UPDATE`);

export const INSERT_RUN = sql(
  "insert_run",
  `INSERT INTO runs (run_id, workflow, version, status, input, output, error, parent_run_id, parent_op_key, wake_at, waiting_for,
     lease_owner, lease_expires_at, lease_epoch, last_seq, wake_pending, created_at, updated_at, finished_at)
   VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)
   ON CONFLICT (run_id) DO NOTHING
   RETURNING run_id`,
);

/** Inserts many runs in one statement (ids must be distinct); bind with `runArrays`. Returns the ids it inserted. */
export const INSERT_RUNS = sql(
  "insert_runs",
  `INSERT INTO runs (run_id, workflow, version, status, input, output, error, parent_run_id, parent_op_key, wake_at, waiting_for,
     lease_owner, lease_expires_at, lease_epoch, last_seq, wake_pending, created_at, updated_at, finished_at)
   SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[],
     $10::bigint[], $11::text[], $12::text[], $13::bigint[], $14::bigint[], $15::bigint[], $16::boolean[], $17::bigint[], $18::bigint[],
     $19::bigint[])
   ON CONFLICT (run_id) DO NOTHING
   RETURNING run_id AS "runId"`,
);

const UPDATE_STATES_TEXT = `UPDATE runs AS r SET status = u.status, output = u.output, error = u.error, wake_at = u.wake_at,
     waiting_for = u.waiting_for, lease_owner = u.lease_owner, lease_expires_at = u.lease_expires_at, lease_epoch = u.lease_epoch,
     last_seq = u.last_seq, wake_pending = u.wake_pending, updated_at = u.updated_at, finished_at = u.finished_at
   FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::text[], $7::text[], $8::bigint[], $9::bigint[],
     $10::bigint[], $11::boolean[], $12::bigint[], $13::bigint[])
     AS u(run_id, status, output, error, wake_at, waiting_for, lease_owner, lease_expires_at, lease_epoch, last_seq, wake_pending, updated_at, finished_at)
   WHERE r.run_id = u.run_id`;

/** Writes the mutable columns of many runs in one statement; bind with `stateArrays`. */
export const UPDATE_STATES = sql("update_states", UPDATE_STATES_TEXT);
/** {@link UPDATE_STATES}, returning the whole updated rows. */
export const UPDATE_STATES_RETURNING = sql("update_states_returning", `${UPDATE_STATES_TEXT} RETURNING ${stateColumns("r")}, r.input`);

/** Runs per (workflow, status), for gauges. */
export const COUNT_RUNS = sql(
  "count_runs",
  `SELECT workflow, status, count(*)::int AS count FROM runs GROUP BY workflow, status ORDER BY workflow COLLATE "C", status COLLATE "C"`,
);
/** The WHERE conditions of a listing's filters; `param` adds a value and returns its placeholder. */
function runWhere(query: RunFilter, statuses: readonly RunStatus[], param: (value: unknown) => string): string[] {
  const where: string[] = [];
  if (statuses.length > 0) where.push(`status = ANY(${param(statuses)}::text[])`);
  if (query.workflow !== undefined) where.push(`workflow = ${param(query.workflow)}`);
  else if (query.excludeSystem === true) where.push(`NOT starts_with(workflow, ${param(SYSTEM_WORKFLOW_PREFIX)})`);
  if (query.parentRunId === null) where.push("parent_run_id IS NULL");
  else if (query.parentRunId !== undefined) where.push(`parent_run_id = ${param(query.parentRunId)}`);
  // starts_with compares code points whatever the column's collation, and treats % and _ as text.
  if (query.runIdPrefix !== undefined && query.runIdPrefix !== "") where.push(`starts_with(run_id, ${param(query.runIdPrefix)})`);
  if (query.q !== undefined && query.q !== "") {
    const pattern = param(likePattern(query.q));
    // The error's message only (not its stack); a sealed error (withPayloads) is a JSON marker without one.
    where.push(
      `(run_id ILIKE ${pattern} ESCAPE '\\' OR workflow ILIKE ${pattern} ESCAPE '\\' OR (error::json ->> 'message') ILIKE ${pattern} ESCAPE '\\'` +
        ` OR input ILIKE ${pattern} ESCAPE '\\' OR EXISTS (SELECT 1 FROM run_tags t WHERE t.run_id = runs.run_id AND (t.key || ':' || t.value) ILIKE ${pattern} ESCAPE '\\'))`,
    );
  }
  if (query.createdAfter !== undefined) where.push(`created_at > ${param(query.createdAfter)}`);
  if (query.createdBefore !== undefined) where.push(`created_at < ${param(query.createdBefore)}`);
  for (const [key, value] of Object.entries(query.tags ?? {})) where.push(tagCondition(param(key), param(value)));
  return where;
}

/** A placeholder maker over `values`. */
function params(values: unknown[]): (value: unknown) => string {
  return (value) => {
    values.push(value);
    return `$${values.length}`;
  };
}

/** The listRuns query for these filters, with its parameters. */
export function listRunsQuery(
  query: ListRunsQuery,
  statuses: readonly RunStatus[],
  cursor: RunCursor | undefined,
  limit: number,
): { text: string; values: unknown[] } {
  const values: unknown[] = [];
  const param = params(values);
  const where = runWhere(query, statuses, param);
  if (cursor) where.push(`(created_at, run_id) < (${param(cursor.createdAt)}, ${param(cursor.runId)})`);
  const text = `SELECT ${RUN_COLUMNS} FROM runs ${where.length > 0 ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY created_at DESC, run_id DESC LIMIT ${param(limit)}`;
  return { text, values };
}

/** The countRuns query for these filters, grouped by workflow and status, with its parameters. */
export function countRunsQuery(query: RunFilter, statuses: readonly RunStatus[]): { text: string; values: unknown[] } {
  const values: unknown[] = [];
  const where = runWhere(query, statuses, params(values));
  const text = `SELECT workflow, status, COUNT(*) AS count FROM runs ${where.length > 0 ? `WHERE ${where.join(" AND ")}` : ""} GROUP BY workflow, status ORDER BY workflow, status`;
  return { text, values };
}

/**
 * Creates plain runs (no queue, tags, deadline, delayed start or blobs) with their first entries in
 * one statement, its own transaction (`cairn_create_plain`, migration 0028): $1–$11 one array per
 * run column (ids, workflows, versions, statuses, inputs, parents, parent op keys, lease owners,
 * lease durations, epochs, last seqs), $12 the time (NULL: the database clock), $13–$17 the entries'
 * run ids, seqs, kinds, payloads and epochs, $18 the wake-up channel (NULL: none), $19–$20 the
 * journal NOTIFY. Returns the ids it inserted, each with the time it stamped.
 */
export const CREATE_PLAIN_FN = sql(
  "create_plain_fn",
  `SELECT created_id AS "runId", created_at_ms AS "at" FROM cairn_create_plain($1::text[], $2::text[], $3::text[], $4::text[], $5::text[],
     $6::text[], $7::text[], $8::text[], $9::bigint[], $10::bigint[], $11::bigint[], $12::bigint,
     $13::text[], $14::bigint[], $15::text[], $16::text[], $17::bigint[], $18::text, $19::text, $20::text)`,
);
