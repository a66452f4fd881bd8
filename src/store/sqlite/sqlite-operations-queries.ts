import { RUN_COLUMNS, WORKER_COLUMNS } from "./sqlite-rows.js";

// The statements of operations for the SQLite store (see sqlite-operations.ts): the worker registry,
// stuck runs, and the safe-deploys feature (versions, drains); none runs on the step-commit path.

/** Bind with `workerParams`. */
export const UPSERT_WORKER = `INSERT INTO workers (worker_id, host, pid, workflows, runs_held, started_at, heartbeat_at)
       VALUES (@workerId, @host, @pid, @workflows, @runsHeld, @startedAt, @heartbeatAt)
       ON CONFLICT (worker_id) DO UPDATE SET host = excluded.host, pid = excluded.pid, workflows = excluded.workflows,
         runs_held = excluded.runs_held, started_at = excluded.started_at, heartbeat_at = excluded.heartbeat_at`;
export const REMOVE_WORKER = "DELETE FROM workers WHERE worker_id = ?";
export const LIST_WORKERS = `SELECT ${WORKER_COLUMNS} FROM workers WHERE heartbeat_at > ? ORDER BY heartbeat_at DESC, worker_id`;

/**
 * Stuck runs (common/run-state `isStuck`): one part per kind of stuck run, each pinned to the index that
 * holds just that kind, so the check costs a few index probes however many runs are held or parked.
 * Bind `@before` (now - grace) and `@limit`.
 */
export const STUCK_RUNS = (() => {
  const stuck = (index: string, where: string) =>
    `SELECT * FROM (SELECT ${RUN_COLUMNS} FROM runs INDEXED BY ${index} WHERE ${where} ORDER BY created_at, run_id LIMIT @limit)`;
  return `SELECT * FROM (
         ${stuck("runs_stuck_idx", "status = 'suspended' AND wake_at IS NULL AND (waiting_for IS NULL OR waiting_for = '[]')")}
         UNION ALL ${stuck("runs_wake_idx", "status = 'suspended' AND wake_at < @before")}
         UNION ALL ${stuck("runs_pending_idx", "status = 'pending' AND updated_at < @before")}
         UNION ALL ${stuck("runs_lease_idx", "status = 'running' AND lease_expires_at < @before")}
         UNION ALL ${stuck("runs_lease_idx", "status = 'running' AND lease_expires_at IS NULL AND updated_at < @before")}
       ) ORDER BY createdAt, runId LIMIT @limit`;
})();

/** Runs per (workflow, version, status). */
export const COUNT_VERSIONS =
  "SELECT workflow, version, status, COUNT(*) AS count FROM runs GROUP BY workflow, version, status ORDER BY workflow, version, status";
export const DRAIN_VERSION = "INSERT INTO drained_versions (workflow, version, drained_at) VALUES (?, ?, ?) ON CONFLICT (workflow, version) DO NOTHING";
export const UNDRAIN_VERSION = "DELETE FROM drained_versions WHERE workflow = ? AND version = ?";
export const LIST_DRAINED = "SELECT workflow, version, drained_at AS drainedAt FROM drained_versions ORDER BY workflow, version";
