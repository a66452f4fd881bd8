import { STATE_COLUMNS } from "./sqlite-rows.js";

// The statements of flow control (queues, debounce) for the SQLite store (see sqlite-flow.ts).

export const SET_FLOW = "UPDATE runs SET queue = ?, concurrency_key = ?, priority = ? WHERE run_id = ?";

export const QUEUE_STATS = `SELECT queue, concurrency_key AS concurrencyKey,
         SUM(status = 'running') AS running,
         SUM(status = 'pending' OR (status = 'suspended' AND wake_at IS NOT NULL AND wake_at <= @now)) AS waiting,
         SUM(status = 'suspended' AND (wake_at IS NULL OR wake_at > @now)) AS suspended
       FROM runs WHERE queue IS NOT NULL AND status IN ('pending', 'running', 'suspended')
       GROUP BY queue, concurrency_key ORDER BY queue, concurrency_key`;

export const FIND_DEBOUNCED = "SELECT run_id AS runId FROM runs WHERE workflow = ? AND debounce_key = ? AND lease_epoch = 0";
export const REBOUNCE = "UPDATE runs SET input = ?, wake_at = ?, last_seq = ?, updated_at = ? WHERE run_id = ?";
export const SET_DEBOUNCE = "UPDATE runs SET debounce_key = ?, queue = ?, concurrency_key = ?, priority = ? WHERE run_id = ?";

/** Some run of the queues named in the JSON array (first parameter) pending or due at the second. */
export const ANY_QUEUED_DUE = `SELECT 1 FROM runs WHERE queue IN (SELECT value FROM json_each(?))
      AND (status = 'pending' OR (status = 'suspended' AND wake_at IS NOT NULL AND wake_at <= ?)) LIMIT 1`;

export const MARK_STARTED = "UPDATE runs SET started_at = ? WHERE run_id = ?";
export const COUNT_RUNNING = "SELECT COUNT(*) AS n FROM runs WHERE queue = ? AND status = 'running'";
export const COUNT_STARTED = "SELECT COUNT(*) AS n FROM runs WHERE queue = ? AND started_at > ?";
export const RUNNING_BY_KEY = `SELECT concurrency_key AS k, COUNT(*) AS n FROM runs
         WHERE queue = ? AND status = 'running' AND concurrency_key IN (SELECT value FROM json_each(?)) GROUP BY concurrency_key`;

/**
 * Pending and due runs of one queue in claim order (priority desc, then oldest wake-up, then insertion
 * order: the rowid, the last column of every index, so FIFO holds within a millisecond), for `pairs`
 * (workflow, version) pairs; with `perKeyLimit`, keys already at their limit (`@perKey`) are skipped.
 * Positional parameters are the pairs of each part, in order; named ones `@queue`, `@now`, `@limit`.
 */
export function queueCandidatesQuery(pairs: number, perKeyLimit: boolean): string {
  const versions = Array.from({ length: pairs }, () => "(workflow = ? AND version = ?)").join(" OR ");
  const fullKeys = !perKeyLimit
    ? ""
    : `AND (concurrency_key IS NULL OR concurrency_key NOT IN (SELECT concurrency_key FROM runs
             WHERE queue = @queue AND status = 'running' AND concurrency_key IS NOT NULL GROUP BY concurrency_key HAVING COUNT(*) >= @perKey))`;
  const part = (key: string, where: string) =>
    `SELECT * FROM (SELECT ${STATE_COLUMNS}, concurrency_key AS concurrencyKey, priority AS qPriority, ${key} AS claimKey, rowid AS claimSeq FROM runs
         WHERE queue = @queue AND ${where} AND (${versions}) ${fullKeys} ORDER BY priority DESC, ${key}, rowid LIMIT @limit)`;
  return `SELECT * FROM (
        ${part("created_at", "status = 'pending'")}
        UNION ALL ${part("wake_at", "status = 'suspended' AND wake_at IS NOT NULL AND wake_at <= @now")}
      ) ORDER BY qPriority DESC, claimKey, claimSeq LIMIT @limit`;
}
