import type { PayloadBlob } from "../../core/store.js";
import { referencedHashesSql } from "../common/blob-rows.js";
import type { Sql } from "./postgres-queries.js";
import type { Tx } from "./postgres-tx.js";

/** Inserts blobs in one statement, or marks existing ones used (same hash, same text). */
const INSERT_BLOBS: Sql = {
  name: "cairn_insert_blobs",
  text: `INSERT INTO blobs (hash, size, body, created_at, used_at)
   SELECT hash, size, body, $4, $4 FROM unnest($1::text[], $2::bigint[], $3::text[]) AS b (hash, size, body)
   ON CONFLICT (hash) DO UPDATE SET used_at = excluded.used_at`,
};

/** See `Store.readBlobs`. */
export const READ_BLOBS: Sql = { name: "cairn_read_blobs", text: "SELECT hash, size::float8 AS size, body FROM blobs WHERE hash = ANY($1::text[])" };

/** See `Store.deleteUnreferencedBlobs`. */
export const DELETE_UNREFERENCED_BLOBS: Sql = {
  name: "cairn_delete_unreferenced_blobs",
  text: `DELETE FROM blobs WHERE used_at < $1 AND hash NOT IN (${referencedHashesSql()}) RETURNING hash`,
};

/** Writes `blobs` in the transaction `tx` (nothing when there are none). */
export async function insertBlobs(tx: Tx, blobs: readonly PayloadBlob[] | undefined): Promise<void> {
  if (!blobs || blobs.length === 0) return;
  await tx.query(INSERT_BLOBS, [blobs.map((b) => b.hash), blobs.map((b) => b.size), blobs.map((b) => b.body), tx.now]);
}
