// The statements of step flow control for the SQLite store (see sqlite-step-flow.ts).

const LIVE_HOLDER = `EXISTS (SELECT 1 FROM runs r WHERE r.run_id = s.run_id AND r.status = 'running' AND r.lease_epoch = s.epoch AND r.lease_expires_at > @now)`;
const LIVE_WAITER = `EXISTS (SELECT 1 FROM runs r WHERE r.run_id = w.run_id AND r.status IN ('pending', 'running', 'suspended'))`;

export const QUEUE = "INSERT OR IGNORE INTO step_flow_waiters (bucket, run_id, op_key, since) VALUES (@bucket, @runId, @opKey, @now)";
export const UNQUEUE = "DELETE FROM step_flow_waiters WHERE bucket = @bucket AND run_id = @runId AND op_key = @opKey";
export const HIT = "INSERT INTO step_flow_hits (bucket, at) VALUES (?, ?)";
export const HOLD = "INSERT INTO step_flow_slots (bucket, run_id, op_key, epoch, acquired_at) VALUES (@bucket, @runId, @opKey, @epoch, @now)";
export const DROP_SLOT = "DELETE FROM step_flow_slots WHERE bucket = ? AND run_id = ? AND op_key = ?";
export const PRUNE_WAITERS = `DELETE FROM step_flow_waiters AS w WHERE bucket = ? AND NOT ${LIVE_WAITER}`;
export const MY_WAIT = "SELECT id, since FROM step_flow_waiters WHERE bucket = ? AND run_id = ? AND op_key = ?";
export const AHEAD_OF = "SELECT COUNT(*) AS n FROM step_flow_waiters WHERE bucket = @bucket AND (since < @since OR (since = @since AND id < @id))";
export const ALL_WAITING = "SELECT COUNT(*) AS n FROM step_flow_waiters WHERE bucket = ?";
export const PRUNE_HITS = "DELETE FROM step_flow_hits WHERE bucket = ? AND at <= ?";
export const COUNT_HITS = "SELECT COUNT(*) AS n, MIN(at) AS oldest FROM step_flow_hits WHERE bucket = ?";
/** A holder that is not live (crashed and its lease expired, or moved on) holds nothing; this op's own old row goes too. */
export const PRUNE_SLOTS = `DELETE FROM step_flow_slots AS s WHERE bucket = @bucket AND (NOT ${LIVE_HOLDER} OR (run_id = @runId AND op_key = @opKey))`;
export const COUNT_SLOTS =
  "SELECT COUNT(*) AS n, MIN(r.lease_expires_at) AS nextFree FROM step_flow_slots s JOIN runs r ON r.run_id = s.run_id WHERE s.bucket = ?";
export const FIRST_WAITER = "SELECT run_id AS runId FROM step_flow_waiters WHERE bucket = ? ORDER BY since, id LIMIT 1";
