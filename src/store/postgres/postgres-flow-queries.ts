import { RUN_COLUMNS, STATE_COLUMNS } from "./postgres-rows.js";
import { sql } from "./postgres-queries.js";

// The statements of flow control (queues, debounce) for the PostgreSQL store (see postgres-flow.ts).

export const SET_FLOWS = sql(
  "set_flows",
  `UPDATE runs AS r SET queue = f.queue, concurrency_key = f.concurrency_key, priority = f.priority
         FROM unnest($1::text[], $2::text[], $3::text[], $4::int[]) AS f(run_id, queue, concurrency_key, priority)
         WHERE r.run_id = f.run_id`,
);

/**
 * Serialises the claimers of one queue with a transaction-scoped advisory lock keyed by the schema
 * and queue name: it is held until the claim commits, so the running count read after it includes
 * every claim committed before, and no other claimer can take a slot until this one commits.
 * (Two queue names hashing alike only serialise each other's claims more than needed.)
 */
export const LOCK_QUEUE = sql("lock_queue", "SELECT pg_advisory_xact_lock(hashtext('cairn.queue'), hashtext(current_schema() || '/' || $1))");

export const COUNT_RUNNING = sql("queue_running", "SELECT count(*)::int AS n FROM runs WHERE queue = $1 AND status = 'running'");

export const COUNT_STARTED = sql("queue_started", "SELECT count(*)::int AS n FROM runs WHERE queue = $1 AND started_at > $2");

export const RUNNING_BY_KEY = sql(
  "queue_running_by_key",
  `SELECT concurrency_key AS k, count(*)::int AS n FROM runs
         WHERE queue = $1 AND status = 'running' AND concurrency_key = ANY($2::text[]) GROUP BY concurrency_key`,
);

export const MARK_STARTED = sql("queue_mark_started", "UPDATE runs SET started_at = $2 WHERE run_id = ANY($1::text[])");

/**
 * Pending and due runs of one queue, locked with SKIP LOCKED, in claim order (priority desc, then
 * oldest wake-up, then insertion order by `created_seq`, so FIFO holds within a millisecond), leaving out keys already at their limit ($6 NULL: no per-key limit).
 * $1/$2 workflow names/versions, $3 limit, $4 now, $5 queue.
 */
export const CANDIDATES = sql(
  "queue_candidates",
  `WITH wanted AS (SELECT w, v FROM unnest($1::text[], $2::text[]) AS t(w, v)),
   full_keys AS (
     SELECT concurrency_key FROM runs WHERE $6::int IS NOT NULL AND queue = $5 AND status = 'running' AND concurrency_key IS NOT NULL
     GROUP BY concurrency_key HAVING count(*) >= $6::int),
   pending AS (
     SELECT ${STATE_COLUMNS}, concurrency_key AS "concurrencyKey", priority AS "qPriority", created_at AS "claimKey", created_seq AS "claimSeq" FROM runs
     WHERE queue = $5 AND status = 'pending' AND (workflow, version) IN (SELECT w, v FROM wanted)
       AND (concurrency_key IS NULL OR concurrency_key NOT IN (SELECT concurrency_key FROM full_keys))
     ORDER BY priority DESC, created_at, created_seq LIMIT $3 FOR UPDATE OF runs SKIP LOCKED),
   due AS (
     SELECT ${STATE_COLUMNS}, concurrency_key AS "concurrencyKey", priority AS "qPriority", wake_at AS "claimKey", created_seq AS "claimSeq" FROM runs
     WHERE queue = $5 AND status = 'suspended' AND wake_at IS NOT NULL AND wake_at <= $4 AND (workflow, version) IN (SELECT w, v FROM wanted)
       AND (concurrency_key IS NULL OR concurrency_key NOT IN (SELECT concurrency_key FROM full_keys))
     ORDER BY priority DESC, wake_at, created_seq LIMIT $3 FOR UPDATE OF runs SKIP LOCKED)
   SELECT * FROM (SELECT * FROM pending UNION ALL SELECT * FROM due) AS c ORDER BY "qPriority" DESC, "claimKey", "claimSeq" LIMIT $3`,
);

/**
 * Serialises debounced starts of one (workflow, key); the row lock of FOR UPDATE then keeps a claimer
 * (which locks with SKIP LOCKED) and this start apart: whichever locks the run first wins, and a
 * start that waited sees the claimed run's new epoch and creates a fresh run instead.
 */
export const LOCK_DEBOUNCE = sql(
  "lock_debounce",
  "SELECT pg_advisory_xact_lock(hashtext('cairn.debounce'), hashtext(current_schema() || '/' || $1 || '/' || $2))",
);

export const FIND_DEBOUNCED = sql("find_debounced", `SELECT ${RUN_COLUMNS} FROM runs WHERE workflow = $1 AND debounce_key = $2 AND lease_epoch = 0 FOR UPDATE`);

export const REBOUNCE = sql("rebounce", "UPDATE runs SET input = $2, wake_at = $3, last_seq = $4, updated_at = $5 WHERE run_id = $1");

export const SET_DEBOUNCE = sql("set_debounce", "UPDATE runs SET debounce_key = $2, queue = $3, concurrency_key = $4, priority = $5 WHERE run_id = $1");

export const QUEUE_STATS = sql(
  "queue_stats",
  `SELECT queue, concurrency_key AS "concurrencyKey",
     (count(*) FILTER (WHERE status = 'running'))::int AS running,
     (count(*) FILTER (WHERE status = 'pending' OR (status = 'suspended' AND wake_at <= $1)))::int AS waiting,
     (count(*) FILTER (WHERE status = 'suspended' AND (wake_at IS NULL OR wake_at > $1)))::int AS suspended
   FROM runs WHERE queue IS NOT NULL AND status IN ('pending', 'running', 'suspended')
   GROUP BY queue, concurrency_key ORDER BY queue, concurrency_key NULLS FIRST`,
);
