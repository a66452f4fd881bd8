import { CHECKPOINT_KINDS_SQL } from "../common/retention-sql.js";

// The statements of journal compaction for the PostgreSQL store (see postgres-compaction.ts).
// Plain texts (not named `Sql`): they run rarely, so `pg` does not keep them prepared.

const MARKER_COLUMNS = `entries, bytes, covered_seq AS "coveredSeq", checked_seq AS "checkedSeq", at`;

/** $1 after run id, $2 checkpoint before, $3 limit, $4 run id (NULL: any): runs with a checkpoint older than the cutoff above their last checked one (journal_checkpoint_idx). */
export const LIST_COMPACTABLE = `SELECT r.run_id AS "runId", COALESCE(c.checked_seq, 0)::int AS "checkedSeq"
     FROM runs r LEFT JOIN journal_compactions c ON c.run_id = r.run_id
     WHERE r.run_id > $1 AND ($4::text IS NULL OR r.run_id = $4) AND EXISTS (SELECT 1 FROM journal j WHERE j.run_id = r.run_id AND j.kind IN ${CHECKPOINT_KINDS_SQL}
       AND j.seq > COALESCE(c.checked_seq, 0) AND j.at < $2)
     ORDER BY r.run_id LIMIT $3`;

/** Holds off a prune of run $1 (which locks it FOR UPDATE) without blocking its writers, as a foreign key check does. */
export const LOCK_RUN_KEY = "SELECT 1 FROM runs WHERE run_id = $1 FOR KEY SHARE";

/** $1 run id, $2 seq: the checkpoint a compaction is covered by. */
export const CHECKPOINT_EXISTS = `SELECT 1 FROM journal WHERE run_id = $1 AND seq = $2 AND kind IN ${CHECKPOINT_KINDS_SQL}`;

/** $1 run id, $2 seqs, $3 checkpoint seq: deletes them, returning each one's payload bytes. */
export const DELETE_SUPERSEDED = `DELETE FROM journal WHERE run_id = $1 AND seq = ANY($2::bigint[]) AND seq > 1 AND seq < $3
     RETURNING octet_length(payload) AS bytes`;

/** $1 run id, $2 entries, $3 bytes, $4 covered seq (0 when nothing was deleted), $5 checked seq, $6 at. */
export const UPSERT_MARKER = `INSERT INTO journal_compactions (run_id, entries, bytes, covered_seq, checked_seq, at) VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (run_id) DO UPDATE SET entries = journal_compactions.entries + excluded.entries, bytes = journal_compactions.bytes + excluded.bytes,
       covered_seq = GREATEST(journal_compactions.covered_seq, excluded.covered_seq), checked_seq = GREATEST(journal_compactions.checked_seq, excluded.checked_seq),
       at = CASE WHEN excluded.entries > 0 THEN excluded.at ELSE journal_compactions.at END`;

export const READ_MARKER = `SELECT ${MARKER_COLUMNS} FROM journal_compactions WHERE run_id = $1`;

/** $1 run id, $2 entries, $3 bytes, $4 covered seq, $5 checked seq, $6 at: a marker carried by an import or a fork. */
export const INSERT_MARKER = "INSERT INTO journal_compactions (run_id, entries, bytes, covered_seq, checked_seq, at) VALUES ($1, $2, $3, $4, $5, $6)";
