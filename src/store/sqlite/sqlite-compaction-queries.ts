import { CHECKPOINT_KINDS_SQL } from "../common/retention-sql.js";

// The statements of journal compaction for the SQLite store (see sqlite-compaction.ts).

const MARKER_COLUMNS = "entries, bytes, covered_seq AS coveredSeq, checked_seq AS checkedSeq, at";

/** After run id, run id twice (NULL: any), checkpoint before, limit: runs with a checkpoint older than the cutoff above their last checked one (journal_checkpoint_idx). */
export const LIST_COMPACTABLE = `SELECT r.run_id AS runId, COALESCE(c.checked_seq, 0) AS checkedSeq
       FROM runs r LEFT JOIN journal_compactions c ON c.run_id = r.run_id
       WHERE r.run_id > ? AND (? IS NULL OR r.run_id = ?) AND EXISTS (SELECT 1 FROM journal j WHERE j.run_id = r.run_id AND j.kind IN ${CHECKPOINT_KINDS_SQL}
         AND j.seq > COALESCE(c.checked_seq, 0) AND j.at < ?)
       ORDER BY r.run_id LIMIT ?`;

export const RUN_EXISTS = "SELECT 1 FROM runs WHERE run_id = ?";

/** Run id, seq: the checkpoint a compaction is covered by. */
export const CHECKPOINT_EXISTS = `SELECT 1 FROM journal WHERE run_id = ? AND seq = ? AND kind IN ${CHECKPOINT_KINDS_SQL}`;

/** Run id, seqs (a JSON array), checkpoint seq: deletes them, returning each one's payload bytes. */
export const DELETE_SUPERSEDED = `DELETE FROM journal WHERE run_id = ? AND seq IN (SELECT value FROM json_each(?)) AND seq > 1 AND seq < ?
       RETURNING length(CAST(payload AS BLOB)) AS bytes`;

/** Run id, entries, bytes, covered seq (0 when nothing was deleted), checked seq, at. */
export const UPSERT_MARKER = `INSERT INTO journal_compactions (run_id, entries, bytes, covered_seq, checked_seq, at) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (run_id) DO UPDATE SET entries = entries + excluded.entries, bytes = bytes + excluded.bytes,
         covered_seq = MAX(covered_seq, excluded.covered_seq), checked_seq = MAX(checked_seq, excluded.checked_seq),
         at = CASE WHEN excluded.entries > 0 THEN excluded.at ELSE at END`;

export const READ_MARKER = `SELECT ${MARKER_COLUMNS} FROM journal_compactions WHERE run_id = ?`;

/** Run id, entries, bytes, covered seq, checked seq, at: a marker carried by an import or a fork. */
export const INSERT_MARKER = "INSERT INTO journal_compactions (run_id, entries, bytes, covered_seq, checked_seq, at) VALUES (?, ?, ?, ?, ?, ?)";
