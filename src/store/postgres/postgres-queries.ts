import { tagCondition } from "../common/live-sql.js";
import { TERMINAL_STATUSES_SQL, type RunStatus } from "../../core/run.js";
import type { ListHumanRequestsQuery, ListRunsQuery, RunFilter } from "../../core/store.js";
import { likePattern, type RunCursor } from "../common/list-query.js";
import { ENTRY_COLUMNS, HUMAN_COLUMNS, INBOX_COLUMNS, RUN_COLUMNS, STATE_COLUMNS, WORKER_COLUMNS, stateColumns } from "./postgres-rows.js";

/**
 * A statement with a fixed text. The name makes `pg` prepare it once per connection;
 * names are per text, so a changed text must get a new name.
 */
export interface Sql {
  name: string;
  text: string;
}

/** The database clock in epoch milliseconds: the time the expression is evaluated, not the transaction start. */
export const DB_NOW = "(extract(epoch from clock_timestamp()) * 1000)::bigint";

/**
 * The database clock as a single statement sees it: when the statement started. Stable within the
 * statement (unlike clock_timestamp()), so comparisons with it can use indexes.
 */
const STATEMENT_NOW = "(extract(epoch from statement_timestamp()) * 1000)::bigint";

/** `$n` as the caller's time, or the database clock when it is NULL (database-clock mode passes NULL). */
function nowParam(n: number): string {
  return `COALESCE($${n}::bigint, ${STATEMENT_NOW})`;
}

const sql = (name: string, text: string): Sql => ({ name: `cairn_${name}`, text });

const TERMINAL = TERMINAL_STATUSES_SQL;

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

/** Appends many journal entries in one statement; bind with `entryArrays`. */
export const INSERT_ENTRIES = sql(
  "insert_entries",
  `INSERT INTO journal (run_id, seq, kind, op_key, payload, epoch, at)
   SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::bigint[])`,
);

/**
 * Appends entries that only advance their runs' journals (common/plan-write `isPlainAppend`) in
 * one statement, without locking the rows first: each run's row is updated only if it is running
 * under the writer's epoch with a lease held, and its entries are inserted after the seq it had.
 * Returns, for each run it updated, the last seq before the append. Bind: run ids, epochs, entry
 * counts (one per run), now, then per entry: run id, index within its run (1…), kind, op key, payload.
 */
export const APPEND_PLAIN = sql(
  "append_plain",
  `WITH u AS (
     UPDATE runs AS r SET last_seq = r.last_seq + w.n, updated_at = $4::bigint
     FROM unnest($1::text[], $2::bigint[], $3::bigint[]) AS w(run_id, epoch, n)
     WHERE r.run_id = w.run_id AND r.lease_epoch = w.epoch AND r.status = 'running' AND r.lease_owner IS NOT NULL
     RETURNING r.run_id, r.last_seq - w.n AS base, r.lease_epoch AS epoch
   ), e AS (
     INSERT INTO journal (run_id, seq, kind, op_key, payload, epoch, at)
     SELECT e.run_id, u.base + e.idx, e.kind, e.op_key, e.payload, u.epoch, $4::bigint
     FROM unnest($5::text[], $6::bigint[], $7::text[], $8::text[], $9::text[]) AS e(run_id, idx, kind, op_key, payload)
     JOIN u ON u.run_id = e.run_id
   )
   SELECT run_id AS "runId", base FROM u`,
);

/**
 * {@link APPEND_PLAIN} as one statement that commits by itself (migration 0017's function): all of
 * the batch or nothing (SQLSTATE {@link NOT_HELD}), with the journal NOTIFY ($10 channel, $11
 * payload; NULL for none) sent as it commits. $4 NULL reads the database clock.
 */
export const APPEND_PLAIN_FN = sql(
  "append_plain_fn",
  `SELECT run_id AS "runId", base FROM cairn_append_plain($1::text[], $2::bigint[], $3::bigint[], $4::bigint,
     $5::text[], $6::bigint[], $7::text[], $8::text[], $9::text[], $10::text, $11::text)`,
);
/** Raised by {@link APPEND_PLAIN_FN} when some run of the batch is not held under its write's epoch. */
export const NOT_HELD = "CN001";

export const READ_JOURNAL = sql("read_journal", `SELECT ${ENTRY_COLUMNS} FROM journal WHERE run_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`);
/** The newest loop checkpoint below a seq: served by the partial index journal_checkpoint_idx. */
export const LATEST_CHECKPOINT = sql(
  "latest_checkpoint",
  `SELECT ${ENTRY_COLUMNS} FROM journal
   WHERE run_id = $1 AND kind IN ('loop.snapshot', 'loop.completed') AND seq < $2 ORDER BY seq DESC LIMIT 1`,
);
export const EXTEND_HUMAN = sql("extend_human", "UPDATE human_requests SET timeout_at = $1 WHERE request_id = $2 AND status = 'pending'");
export const INSERT_TEXT = sql("insert_text", "INSERT INTO journal_text (run_id, seq, op_key, body) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING");
/** Any of the query's words ($2: terms joined by " | "), ranked by ts_rank. */
export const SEARCH_TEXT = sql(
  "search_text",
  `SELECT seq::int AS seq, op_key AS "opKey", body AS text FROM journal_text, to_tsquery('simple', $2) AS q
   WHERE run_id = $1 AND tsv @@ q ORDER BY ts_rank(tsv, q) DESC, seq LIMIT $3`,
);
export const READ_JOURNAL_RANGE = sql("read_journal_range", `SELECT ${ENTRY_COLUMNS} FROM journal WHERE run_id = $1 AND seq >= $2 AND seq < $3 ORDER BY seq`);
export const READ_JOURNAL_SEQS = sql("read_journal_seqs", `SELECT ${ENTRY_COLUMNS} FROM journal WHERE run_id = $1 AND seq = ANY($2::bigint[]) ORDER BY seq`);

/**
 * Claim candidates, locked: each kind of runnable run is read from its own index and locked
 * with SKIP LOCKED (rows another claimer holds are passed over, not waited for), then the oldest
 * wake-ups across kinds win. Rows come from the locking scans, so they are the latest committed
 * versions, never a stale snapshot. "created_at + 0" keeps the planner off the status index for
 * expired and released leases, which would walk every held run in creation order; the lease
 * index finds the few expired ones directly. Pending and due runs of a queue are left to the
 * queued claim (postgres-flow.ts); their partial indexes hold only unqueued runs.
 * $1/$2 workflow names/versions, $3 limit, $4 now.
 */
export const CLAIM_CANDIDATES = sql(
  "claim_candidates",
  `WITH wanted AS (SELECT w, v FROM unnest($1::text[], $2::text[]) AS t(w, v)),
   pending AS (
     SELECT ${STATE_COLUMNS}, created_at AS claim_key FROM runs
     WHERE status = 'pending' AND queue IS NULL AND (workflow, version) IN (SELECT w, v FROM wanted)
     ORDER BY created_at, run_id LIMIT $3 FOR UPDATE OF runs SKIP LOCKED),
   due AS (
     SELECT ${STATE_COLUMNS}, wake_at AS claim_key FROM runs
     WHERE status = 'suspended' AND wake_at IS NOT NULL AND queue IS NULL AND wake_at <= $4 AND (workflow, version) IN (SELECT w, v FROM wanted)
     ORDER BY wake_at, run_id LIMIT $3 FOR UPDATE OF runs SKIP LOCKED),
   expired AS (
     SELECT ${STATE_COLUMNS}, created_at AS claim_key FROM runs
     WHERE status = 'running' AND lease_expires_at <= $4 AND (workflow, version) IN (SELECT w, v FROM wanted)
     ORDER BY created_at + 0, run_id LIMIT $3 FOR UPDATE OF runs SKIP LOCKED),
   released AS (
     SELECT ${STATE_COLUMNS}, created_at AS claim_key FROM runs
     WHERE status = 'running' AND lease_expires_at IS NULL AND (workflow, version) IN (SELECT w, v FROM wanted)
     ORDER BY created_at + 0, run_id LIMIT $3 FOR UPDATE OF runs SKIP LOCKED)
   SELECT * FROM (SELECT * FROM pending UNION ALL SELECT * FROM due UNION ALL SELECT * FROM expired UNION ALL SELECT * FROM released) AS c
   ORDER BY claim_key, "runId" LIMIT $3`,
);

/** $1 worker, $2 run ids, $3 epochs, $4 now (NULL: database clock), $5 lease ms. Returns the renewed (runId, epoch) pairs. */
export const RENEW_LEASES = sql(
  "renew_leases",
  `UPDATE runs AS r SET lease_expires_at = ${nowParam(4)} + $5::bigint
   FROM unnest($2::text[], $3::bigint[]) AS l(run_id, epoch)
   WHERE r.run_id = l.run_id AND r.lease_epoch = l.epoch AND r.lease_owner = $1 AND r.status NOT IN ${TERMINAL}
   RETURNING r.run_id AS "runId", r.lease_epoch AS "leaseEpoch"`,
);

export const INSERT_INBOX = sql(
  "insert_inbox",
  `INSERT INTO inbox (run_id, type, event_id, payload, consumed_seq, received_at) VALUES ($1, $2, $3, $4, NULL, $5)
   ON CONFLICT (run_id, event_id) DO NOTHING`,
);
export const FIND_INBOX = sql("find_inbox", "SELECT id FROM inbox WHERE run_id = $1 AND event_id = $2");
export const LOCK_INBOX = sql(
  "lock_inbox",
  `SELECT id, run_id AS "runId", consumed_seq AS "consumedSeq" FROM inbox WHERE id = ANY($1::bigint[]) ORDER BY id FOR UPDATE`,
);
export const CONSUME_INBOX = sql(
  "consume_inbox",
  "UPDATE inbox AS i SET consumed_seq = c.seq FROM unnest($1::bigint[], $2::bigint[]) AS c(id, seq) WHERE i.id = c.id",
);
export const PENDING_EVENTS = sql(
  "pending_events",
  `SELECT ${INBOX_COLUMNS} FROM inbox WHERE run_id = $1 AND type = $2 AND consumed_seq IS NULL ORDER BY id LIMIT $3`,
);
export const LIST_INBOX = sql("list_inbox", `SELECT ${INBOX_COLUMNS} FROM inbox WHERE run_id = $1 ORDER BY id`);

export const INSERT_HUMAN = sql(
  "insert_human",
  `INSERT INTO human_requests (request_id, run_id, op_key, question, options, status, answer, timeout_at, created_at, answered_at, context, closed_reason)
   VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
   ON CONFLICT (request_id) DO NOTHING`,
);
export const GET_HUMAN = sql("get_human", `SELECT ${HUMAN_COLUMNS} FROM human_requests WHERE request_id = $1`);
export const LOCK_HUMAN = sql("lock_human", `SELECT ${HUMAN_COLUMNS} FROM human_requests WHERE request_id = $1 FOR UPDATE`);
/** Closes the pending requests of finished runs ($1 run ids, $2 their final statuses, $3 the time). */
export const CLOSE_HUMANS = sql(
  "close_humans",
  `UPDATE human_requests h SET status = 'closed', closed_reason = c.reason, answered_at = $3
     FROM unnest($1::text[], $2::text[]) AS c (run_id, reason)
    WHERE h.run_id = c.run_id AND h.status = 'pending'`,
);
/** A retried run's closed requests are pending again. */
export const REOPEN_HUMANS = sql(
  "reopen_humans",
  "UPDATE human_requests SET status = 'pending', closed_reason = NULL, answered_at = NULL WHERE run_id = $1 AND status = 'closed'",
);
export const ANSWER_HUMAN = sql(
  "answer_human",
  "UPDATE human_requests SET status = 'answered', answer = $1, answered_at = $2 WHERE request_id = $3 AND status = 'pending'",
);

/** $6 started / $7 heartbeat: the caller's times, or NULL for the database clock (a refresh then keeps started_at). */
export const UPSERT_WORKER = sql(
  "upsert_worker",
  `INSERT INTO workers (worker_id, host, pid, workflows, runs_held, started_at, heartbeat_at)
   VALUES ($1, $2, $3, $4, $5, ${nowParam(6)}, ${nowParam(7)})
   ON CONFLICT (worker_id) DO UPDATE SET host = EXCLUDED.host, pid = EXCLUDED.pid, workflows = EXCLUDED.workflows,
     runs_held = EXCLUDED.runs_held, heartbeat_at = EXCLUDED.heartbeat_at,
     started_at = CASE WHEN $6::bigint IS NULL THEN workers.started_at ELSE EXCLUDED.started_at END`,
);
export const REMOVE_WORKER = sql("remove_worker", "DELETE FROM workers WHERE worker_id = $1");
export const LIST_WORKERS = sql("list_workers", `SELECT ${WORKER_COLUMNS} FROM workers WHERE heartbeat_at > $1 ORDER BY heartbeat_at DESC, worker_id`);

/**
 * Stuck runs (common/run-state `isStuck`), one part per kind, each served by its own index.
 * $1 now (NULL: database clock), $2 grace ms, $3 limit.
 */
/** Runs per (workflow, status), for gauges. */
export const COUNT_RUNS = sql(
  "count_runs",
  `SELECT workflow, status, count(*)::int AS count FROM runs GROUP BY workflow, status ORDER BY workflow COLLATE "C", status COLLATE "C"`,
);

export const STUCK_RUNS = (() => {
  // Inline rather than a CTE, so each part can use `before` as an index bound.
  const before = `(${nowParam(1)} - $2::bigint)`;
  // "created_at + 0" where the kind's own index is not in creation order: an ordered walk of a
  // creation-order index would read every parked or held run to find the (usually no) stuck ones.
  const part = (where: string, order = "created_at") => `(SELECT ${RUN_COLUMNS} FROM runs WHERE ${where} ORDER BY ${order}, run_id LIMIT $3)`;
  return sql(
    "stuck_runs",
    `SELECT * FROM (
       ${part("status = 'suspended' AND wake_at IS NULL AND (waiting_for IS NULL OR waiting_for = '[]')")}
       UNION ALL ${part(`status = 'suspended' AND wake_at IS NOT NULL AND wake_at < ${before}`, "created_at + 0")}
       UNION ALL ${part(`status = 'pending' AND updated_at < ${before}`)}
       UNION ALL ${part(`status = 'running' AND lease_expires_at < ${before}`, "created_at + 0")}
       UNION ALL ${part(`status = 'running' AND lease_expires_at IS NULL AND updated_at < ${before}`, "created_at + 0")}
     ) AS s ORDER BY "createdAt", "runId" LIMIT $3`,
  );
})();

/** The WHERE conditions of a listing's filters; `param` adds a value and returns its placeholder. */
function runWhere(query: RunFilter, statuses: readonly RunStatus[], param: (value: unknown) => string): string[] {
  const where: string[] = [];
  if (statuses.length > 0) where.push(`status = ANY(${param(statuses)}::text[])`);
  if (query.workflow !== undefined) where.push(`workflow = ${param(query.workflow)}`);
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

/** The listHumanRequests query for these filters, with its parameters. */
export function listHumanQuery(query: ListHumanRequestsQuery, limit: number): { text: string; values: unknown[] } {
  const where: string[] = [];
  const values: unknown[] = [];
  const param = (value: unknown) => {
    values.push(value);
    return `$${values.length}`;
  };
  const desc = query.order === "desc";
  if (query.status !== undefined) where.push(`status = ${param(query.status)}`);
  if (query.runId !== undefined) where.push(`run_id = ${param(query.runId)}`);
  if (query.runIdPrefix !== undefined && query.runIdPrefix !== "") where.push(`starts_with(run_id, ${param(query.runIdPrefix)})`);
  if (query.after !== undefined) where.push(`(created_at, request_id) ${desc ? "<" : ">"} (${param(query.after.createdAt)}, ${param(query.after.requestId)})`);
  const direction = desc ? "DESC" : "ASC";
  const text = `SELECT ${HUMAN_COLUMNS} FROM human_requests ${where.length > 0 ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY created_at ${direction}, request_id ${direction} LIMIT ${param(limit)}`;
  return { text, values };
}
