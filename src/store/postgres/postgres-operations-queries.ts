import { RUN_COLUMNS, WORKER_COLUMNS } from "./postgres-rows.js";
import { nowParam, sql } from "./postgres-queries.js";

// The statements of operations for the PostgreSQL store (see postgres-operations.ts): the worker registry,
// stuck runs, and the safe-deploys feature (versions, drains); none runs on the step-commit path.

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

/** Runs per (workflow, version, status). */
export const COUNT_VERSIONS = sql(
  "count_versions",
  `SELECT workflow, version, status, count(*)::int AS count FROM runs
   GROUP BY workflow, version, status ORDER BY workflow COLLATE "C", version COLLATE "C", status COLLATE "C"`,
);

export const DRAIN_VERSION = sql(
  "drain_version",
  "INSERT INTO drained_versions (workflow, version, drained_at) VALUES ($1, $2, $3) ON CONFLICT (workflow, version) DO NOTHING",
);

export const UNDRAIN_VERSION = sql("undrain_version", "DELETE FROM drained_versions WHERE workflow = $1 AND version = $2");

export const LIST_DRAINED = sql(
  "list_drained",
  `SELECT workflow, version, drained_at AS "drainedAt" FROM drained_versions ORDER BY workflow COLLATE "C", version COLLATE "C"`,
);
