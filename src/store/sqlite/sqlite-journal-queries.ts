import { ENTRY_COLUMNS } from "./sqlite-rows.js";

// The statements of the journal for the SQLite store (see sqlite-journal.ts): appends, reads and the search index.

export const INSERT_ENTRY = "INSERT INTO journal (run_id, seq, kind, op_key, payload, epoch, at) VALUES (?, ?, ?, ?, ?, ?, ?)";
export const READ_JOURNAL = `SELECT ${ENTRY_COLUMNS} FROM journal WHERE run_id = ? AND seq > ? ORDER BY seq LIMIT ?`;
/** Served by the partial index journal_checkpoint_idx (the IN list must match the index's). */
export const LATEST_CHECKPOINT = `SELECT ${ENTRY_COLUMNS} FROM journal
       WHERE run_id = ? AND kind IN ('loop.snapshot', 'loop.completed') AND seq < ? ORDER BY seq DESC LIMIT 1`;
export const READ_JOURNAL_RANGE = `SELECT ${ENTRY_COLUMNS} FROM journal WHERE run_id = ? AND seq >= ? AND seq < ? ORDER BY seq`;
export const READ_JOURNAL_SEQS = `SELECT ${ENTRY_COLUMNS} FROM journal WHERE run_id = ? AND seq IN (SELECT value FROM json_each(?)) ORDER BY seq`;
export const INSERT_TEXT = "INSERT INTO journal_text (body, run_id, seq, op_key) VALUES (?, ?, ?, ?)";
/** FTS5 MATCH, ranked by bm25. */
export const SEARCH_TEXT =
  "SELECT seq, op_key AS opKey, body AS text FROM journal_text WHERE journal_text MATCH ? AND run_id = ? ORDER BY bm25(journal_text), seq LIMIT ?";
