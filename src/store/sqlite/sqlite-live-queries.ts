import { LIVE_DELTA_COLUMNS } from "../common/live-delta-sql.js";

// The statements of run tags, published values and replies, deadlines and live-delta listeners for the
// SQLite store (see sqlite-live-statements.ts and sqlite-live-deltas.ts; the ones shared with PostgreSQL
// are in common/live-sql.ts and common/live-delta-sql.ts).

export const INSERT_TAG = "INSERT OR IGNORE INTO run_tags (run_id, key, value) VALUES (?, ?, ?)";
export const INSERT_DEADLINE = "INSERT OR REPLACE INTO run_deadlines (run_id, due_at) VALUES (?, ?)";
export const PUT_VALUE = `INSERT INTO run_values (run_id, kind, name, value, seq, at) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (run_id, kind, name) DO UPDATE SET value = excluded.value, seq = excluded.seq, at = excluded.at`;
export const GET_VALUE = "SELECT run_id AS runId, kind, name, value, seq, at FROM run_values WHERE run_id = ? AND kind = ? AND name = ?";
export const GET_TAGS = "SELECT key, value FROM run_tags WHERE run_id = ? ORDER BY key";
export const CLEAR_DEADLINE = "DELETE FROM run_deadlines WHERE run_id = ?";

export const ADVERTISE_LISTENER =
  "INSERT INTO live_listeners (origin, run_id, expires_at) VALUES (?, ?, ?) ON CONFLICT (origin, run_id) DO UPDATE SET expires_at = excluded.expires_at";
export const RETIRE_LISTENER = "DELETE FROM live_listeners WHERE origin = ? AND run_id = ?";
export const RETIRE_LISTENERS = "DELETE FROM live_listeners WHERE origin = ?";

/** Live deltas after an id, from other origins, of `runs` runs (their ids follow the id and origin), then the limit. */
export function readLiveDeltasQuery(runs: number): string {
  return `SELECT ${LIVE_DELTA_COLUMNS} FROM live_deltas WHERE id > ? AND origin <> ? AND run_id IN (${Array.from({ length: runs }, () => "?").join(", ")}) ORDER BY id LIMIT ?`;
}
