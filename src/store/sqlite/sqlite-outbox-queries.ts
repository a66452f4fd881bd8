// The statements of the outbox for the SQLite store (see sqlite-outbox-statements.ts).

export const OUTBOX_COLUMNS = `id, message_id AS messageId, run_id AS runId, op_key AS opKey, seq, topic, payload, status, attempts,
  next_attempt_at AS nextAttemptAt, last_error AS lastError, lease_owner AS leaseOwner, created_at AS createdAt, delivered_at AS deliveredAt`;

export const INSERT_MESSAGE = `INSERT INTO outbox (message_id, run_id, op_key, seq, topic, payload, status, attempts, next_attempt_at, created_at)
       VALUES (?, ?, ?, ?, ?, ?, 'pending', 0, ?, ?) ON CONFLICT (message_id) DO NOTHING`;
export const ANY_DUE = `SELECT 1 FROM outbox WHERE status = 'pending' AND next_attempt_at <= ? LIMIT 1`;
export const GET_MESSAGE = `SELECT ${OUTBOX_COLUMNS} FROM outbox WHERE message_id = ?`;
export const DELIVER = `UPDATE outbox SET status = 'delivered', delivered_at = ?, lease_owner = NULL
       WHERE message_id = ? AND status = 'pending' AND lease_owner = ? AND attempts = ?`;
/** A failed delivery: retried at the first parameter (twice), or dead when it is NULL. */
export const FAIL = `UPDATE outbox SET status = CASE WHEN ? IS NULL THEN 'dead' ELSE 'pending' END, next_attempt_at = COALESCE(?, ?), last_error = ?, lease_owner = NULL
       WHERE message_id = ? AND status = 'pending' AND lease_owner = ? AND attempts = ?`;
export const REQUEUE = `UPDATE outbox SET status = 'pending', attempts = 0, next_attempt_at = ?, lease_owner = NULL WHERE message_id = ? AND status = 'dead'`;

/** The claim of due messages of `topics` topics: one conditional UPDATE … RETURNING. */
export function claimOutboxQuery(topics: number): string {
  const markers = Array.from({ length: topics }, () => "?").join(", ");
  return `UPDATE outbox SET attempts = attempts + 1, lease_owner = ?, next_attempt_at = ?
         WHERE id IN (SELECT id FROM outbox WHERE status = 'pending' AND next_attempt_at <= ? AND topic IN (${markers}) ORDER BY next_attempt_at, id LIMIT ?)
         RETURNING ${OUTBOX_COLUMNS}`;
}

/** A listing with these WHERE conditions (none: every message), by id. */
export function listOutboxQuery(where: readonly string[]): string {
  return `SELECT ${OUTBOX_COLUMNS} FROM outbox ${where.length > 0 ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY id LIMIT ?`;
}
