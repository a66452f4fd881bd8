import { referencedHashesSql } from "../common/blob-rows.js";
import { sql } from "./postgres-queries.js";

// The statements of payload blobs for the PostgreSQL store (see postgres-blobs.ts).

/** Inserts blobs in one statement, or marks existing ones used (same hash, same text). */
export const INSERT_BLOBS = sql(
  "insert_blobs",
  `INSERT INTO blobs (hash, size, body, created_at, used_at)
   SELECT hash, size, body, $4, $4 FROM unnest($1::text[], $2::bigint[], $3::text[]) AS b (hash, size, body)
   ON CONFLICT (hash) DO UPDATE SET used_at = excluded.used_at`,
);

/** See `Store.readBlobs`. */
export const READ_BLOBS = sql("read_blobs", "SELECT hash, size::float8 AS size, body FROM blobs WHERE hash = ANY($1::text[])");

/** See `Store.deleteUnreferencedBlobs`. */
export const DELETE_UNREFERENCED_BLOBS = sql(
  "delete_unreferenced_blobs",
  `DELETE FROM blobs WHERE used_at < $1 AND hash NOT IN (${referencedHashesSql()}) RETURNING hash`,
);
