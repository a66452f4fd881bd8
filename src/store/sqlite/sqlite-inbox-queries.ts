import { INBOX_COLUMNS } from "./sqlite-rows.js";

// The statements of the inbox for the SQLite store (see sqlite-inbox.ts).

export const INSERT_INBOX = `INSERT INTO inbox (run_id, type, event_id, payload, consumed_seq, received_at) VALUES (?, ?, ?, ?, NULL, ?)
       ON CONFLICT (run_id, event_id) DO NOTHING`;
export const GET_INBOX = `SELECT ${INBOX_COLUMNS} FROM inbox WHERE id = ?`;
export const FIND_INBOX = "SELECT id FROM inbox WHERE run_id = ? AND event_id = ?";
export const CONSUME_INBOX = "UPDATE inbox SET consumed_seq = ? WHERE id = ?";
export const PENDING_EVENTS = `SELECT ${INBOX_COLUMNS} FROM inbox WHERE run_id = ? AND type = ? AND consumed_seq IS NULL ORDER BY id LIMIT ?`;
export const LIST_INBOX = `SELECT ${INBOX_COLUMNS} FROM inbox WHERE run_id = ? ORDER BY id`;
/** The kind of a run's entry at a seq: its last entry says whether it continued as new. */
export const ENTRY_KIND = "SELECT kind FROM journal WHERE run_id = ? AND seq = ?";
/** A continued run's unconsumed events go to the run that continues it (ids, so arrival order, kept). */
export const MOVE_INBOX = "UPDATE inbox SET run_id = ? WHERE run_id = ? AND consumed_seq IS NULL";
