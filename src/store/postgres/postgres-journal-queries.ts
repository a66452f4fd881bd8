import { ENTRY_COLUMNS } from "./postgres-rows.js";
import { nowParam, sql } from "./postgres-queries.js";

// The statements of the journal for the PostgreSQL store (see postgres-journal.ts): appends, reads and the search index.

/** Appends many journal entries in one statement; bind with `entryArrays`. */
export const INSERT_ENTRIES = sql(
  "insert_entries",
  `INSERT INTO journal (run_id, seq, kind, op_key, payload, epoch, at)
   SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::bigint[])`,
);

/**
 * Appends entries that only advance their runs' journals (common/plan-write `isPlainAppend`) in
 * one statement, without locking the rows first: each run's row is updated only if it is running
 * under the writer's epoch with a lease held, and its entries are inserted after the seq it had.
 * Returns, for each run it updated, the last seq before the append. Bind: run ids, epochs, entry
 * counts (one per run), now, then per entry: run id, index within its run (1…), kind, op key, payload.
 */
export const APPEND_PLAIN = sql(
  "append_plain",
  `WITH u AS (
     UPDATE runs AS r SET last_seq = r.last_seq + w.n, updated_at = $4::bigint
     FROM unnest($1::text[], $2::bigint[], $3::bigint[]) AS w(run_id, epoch, n)
     WHERE r.run_id = w.run_id AND r.lease_epoch = w.epoch AND r.status = 'running' AND r.lease_owner IS NOT NULL
     RETURNING r.run_id, r.last_seq - w.n AS base, r.lease_epoch AS epoch
   ), e AS (
     INSERT INTO journal (run_id, seq, kind, op_key, payload, epoch, at)
     SELECT e.run_id, u.base + e.idx, e.kind, e.op_key, e.payload, u.epoch, $4::bigint
     FROM unnest($5::text[], $6::bigint[], $7::text[], $8::text[], $9::text[]) AS e(run_id, idx, kind, op_key, payload)
     JOIN u ON u.run_id = e.run_id
   )
   SELECT run_id AS "runId", base FROM u`,
);

/**
 * Plain appends to one run held under epoch $2, as one plain SQL statement that commits by itself:
 * the row advanced by $3 entries at time $4 (NULL: the database clock), the entries ($5 kinds, $6 op
 * keys, $7 payloads) inserted after its last seq. A run not held under that epoch matches no row, so
 * nothing is inserted and no row returns. The commit of a lone run (every sequential step) takes
 * this instead of {@link APPEND_PLAIN_FN}: a PL/pgSQL call costs the server about 80 µs more CPU per
 * commit (measured: 323 against 240 µs for two entries).
 */
export const APPEND_ONE = sql(
  "append_one",
  `WITH u AS (
     UPDATE runs SET last_seq = last_seq + $3::bigint, updated_at = ${nowParam(4)}
     WHERE run_id = $1 AND lease_epoch = $2 AND status = 'running' AND lease_owner IS NOT NULL
     RETURNING last_seq - $3::bigint AS base, lease_epoch AS epoch, updated_at AS at
   ), e AS (
     INSERT INTO journal (run_id, seq, kind, op_key, payload, epoch, at)
     SELECT $1, u.base + w.idx, w.kind, w.op_key, w.payload, u.epoch, u.at
     FROM u, unnest($5::text[], $6::text[], $7::text[]) WITH ORDINALITY AS w(kind, op_key, payload, idx)
   )
   SELECT base FROM u`,
);

/**
 * {@link APPEND_PLAIN} as one statement that commits by itself (migration 0017's function): all of
 * the batch or nothing (SQLSTATE {@link NOT_HELD}), with the journal NOTIFY ($10 channel, $11
 * payload; NULL for none) sent as it commits. $4 NULL reads the database clock.
 */
export const APPEND_PLAIN_FN = sql(
  "append_plain_fn",
  `SELECT run_id AS "runId", base FROM cairn_append_plain($1::text[], $2::bigint[], $3::bigint[], $4::bigint,
     $5::text[], $6::bigint[], $7::text[], $8::text[], $9::text[], $10::text, $11::text)`,
);
/**
 * A top-level run's completion in one statement (migration 0027): $1 run id, $2 epoch, $3 now (NULL:
 * the database clock), $4 the encoded output, $5–$7 the entries' kinds, op keys and payloads (plain
 * appends, then run.completed), $8/$9 the journal NOTIFY; answers the seq before the first entry.
 * Raises {@link NOT_HELD} (writing nothing) for a run with a parent or not held under that epoch.
 */
export const COMPLETE_PLAIN_FN = sql(
  "complete_plain_fn",
  `SELECT cairn_complete_plain($1::text, $2::bigint, $3::bigint, $4::text, $5::text[], $6::text[], $7::text[], $8::text, $9::text) AS base`,
);
/** Raised by {@link APPEND_PLAIN_FN} when some run of the batch is not held under its write's epoch. */
export const NOT_HELD = "CN001";

export const READ_JOURNAL = sql("read_journal", `SELECT ${ENTRY_COLUMNS} FROM journal WHERE run_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`);
/** The newest loop checkpoint below a seq: served by the partial index journal_checkpoint_idx. */
export const LATEST_CHECKPOINT = sql(
  "latest_checkpoint",
  `SELECT ${ENTRY_COLUMNS} FROM journal
   WHERE run_id = $1 AND kind IN ('loop.snapshot', 'loop.completed') AND seq < $2 ORDER BY seq DESC LIMIT 1`,
);
export const INSERT_TEXT = sql("insert_text", "INSERT INTO journal_text (run_id, seq, op_key, body) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING");
/** Any of the query's words ($2: terms joined by " | "), ranked by ts_rank. */
export const SEARCH_TEXT = sql(
  "search_text",
  `SELECT seq::int AS seq, op_key AS "opKey", body AS text FROM journal_text, to_tsquery('simple', $2) AS q
   WHERE run_id = $1 AND tsv @@ q ORDER BY ts_rank(tsv, q) DESC, seq LIMIT $3`,
);
export const READ_JOURNAL_RANGE = sql("read_journal_range", `SELECT ${ENTRY_COLUMNS} FROM journal WHERE run_id = $1 AND seq >= $2 AND seq < $3 ORDER BY seq`);
export const READ_JOURNAL_SEQS = sql("read_journal_seqs", `SELECT ${ENTRY_COLUMNS} FROM journal WHERE run_id = $1 AND seq = ANY($2::bigint[]) ORDER BY seq`);
