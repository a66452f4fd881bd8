import { referencedHashesSql } from "../common/blob-rows.js";

// The statements of payload blobs for the SQLite store (see sqlite-blobs.ts).

/** Inserts a blob, or marks an existing one used (content-addressed: same hash, same text). */
export const INSERT_BLOB =
  "INSERT INTO blobs (hash, size, body, created_at, used_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (hash) DO UPDATE SET used_at = excluded.used_at";
export const READ_BLOBS = "SELECT hash, size, body FROM blobs WHERE hash IN (SELECT value FROM json_each(?))";
export const DELETE_UNREFERENCED_BLOBS = `DELETE FROM blobs WHERE used_at < ? AND hash NOT IN (${referencedHashesSql()})`;
