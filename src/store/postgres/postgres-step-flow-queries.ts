// The statements of step flow control for the PostgreSQL store (see postgres-step-flow.ts).
// Plain texts (not named `Sql`), as they always were: `pg` does not keep them prepared.

/** Serialises the requests of one bucket until their transaction commits (like the queue lock of postgres-flow.ts). */
export const LOCK_BUCKET = "SELECT pg_advisory_xact_lock(hashtext('cairn.step'), hashtext(current_schema() || '/' || $1))";
export const PRUNE_WAITERS = `DELETE FROM step_flow_waiters w WHERE w.bucket = $1
  AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.run_id = w.run_id AND r.status IN ('pending', 'running', 'suspended'))`;
export const MY_WAIT = `SELECT id, since FROM step_flow_waiters WHERE bucket = $1 AND run_id = $2 AND op_key = $3`;
export const AHEAD_OF = `SELECT COUNT(*)::int AS n FROM step_flow_waiters WHERE bucket = $1 AND (since < $2 OR (since = $2 AND id < $3))`;
export const ALL_WAITING = `SELECT COUNT(*)::int AS n FROM step_flow_waiters WHERE bucket = $1`;
export const PRUNE_HITS = `DELETE FROM step_flow_hits WHERE bucket = $1 AND at <= $2`;
export const COUNT_HITS = `SELECT COUNT(*)::int AS n, MIN(at) AS oldest FROM step_flow_hits WHERE bucket = $1`;
// A holder that is not live (crashed and its lease expired, or moved on) holds nothing; the op's own old row goes too.
export const PRUNE_SLOTS = `DELETE FROM step_flow_slots s WHERE s.bucket = $1 AND (
  NOT EXISTS (SELECT 1 FROM runs r WHERE r.run_id = s.run_id AND r.status = 'running' AND r.lease_epoch = s.epoch AND r.lease_expires_at > $2)
  OR (s.run_id = $3 AND s.op_key = $4))`;
export const COUNT_SLOTS = `SELECT COUNT(*)::int AS n, MIN(r.lease_expires_at) AS "nextFree" FROM step_flow_slots s JOIN runs r ON r.run_id = s.run_id WHERE s.bucket = $1`;
export const QUEUE = `INSERT INTO step_flow_waiters (bucket, run_id, op_key, since) VALUES ($1, $2, $3, $4) ON CONFLICT (bucket, run_id, op_key) DO NOTHING`;
export const UNQUEUE = `DELETE FROM step_flow_waiters WHERE bucket = $1 AND run_id = $2 AND op_key = $3`;
export const HIT = `INSERT INTO step_flow_hits (bucket, at) VALUES ($1, $2)`;
export const HOLD = `INSERT INTO step_flow_slots (bucket, run_id, op_key, epoch, acquired_at) VALUES ($1, $2, $3, $4, $5)`;
export const DROP_SLOT = `DELETE FROM step_flow_slots WHERE bucket = $1 AND run_id = $2 AND op_key = $3`;
export const FIRST_WAITER = `SELECT run_id AS "runId" FROM step_flow_waiters WHERE bucket = $1 ORDER BY since, id LIMIT 1`;
