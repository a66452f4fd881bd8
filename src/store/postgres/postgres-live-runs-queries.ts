import { dueDeadlinesSql } from "../common/live-sql.js";
import { sql } from "./postgres-queries.js";

// The statements of run tags, published values and replies, and deadlines for the PostgreSQL store
// (see postgres-live-runs.ts and `store/common/live-sql.ts`).

export const INSERT_TAGS = sql(
  "insert_tags",
  `INSERT INTO run_tags (run_id, key, value) SELECT * FROM unnest($1::text[], $2::text[], $3::text[]) ON CONFLICT DO NOTHING`,
);

export const INSERT_DEADLINES = sql(
  "insert_deadlines",
  `INSERT INTO run_deadlines (run_id, due_at) SELECT * FROM unnest($1::text[], $2::bigint[]) ON CONFLICT (run_id) DO UPDATE SET due_at = excluded.due_at`,
);

export const PUT_VALUE = sql(
  "put_value",
  `INSERT INTO run_values (run_id, kind, name, value, seq, at) VALUES ($1, $2, $3, $4, $5, $6)
    ON CONFLICT (run_id, kind, name) DO UPDATE SET value = excluded.value, seq = excluded.seq, at = excluded.at`,
);

/** See `Store.getRunValue`. */
export const GET_VALUE = sql(
  "get_value",
  `SELECT run_id AS "runId", kind, name, value, seq::float8 AS seq, at::float8 AS at FROM run_values WHERE run_id = $1 AND kind = $2 AND name = $3`,
);

/** See `Store.getRunTags`. */
export const GET_TAGS = sql("get_tags", "SELECT key, value FROM run_tags WHERE run_id = $1 ORDER BY key");

/** See `Store.listDueDeadlines`. */
export const DUE_DEADLINES = sql("due_deadlines", dueDeadlinesSql((i) => `$${i}`).replace('d.due_at AS "dueAt"', 'd.due_at::float8 AS "dueAt"'));

/** See `Store.clearDeadline`. */
export const CLEAR_DEADLINE = sql("clear_deadline", "DELETE FROM run_deadlines WHERE run_id = $1 RETURNING run_id");
