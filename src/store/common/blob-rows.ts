import { BLOB_REF_PREFIX } from "../../core/payloads.js";
import type { CommitResult, PayloadBlob, RunWrite } from "../../core/store.js";

/** The blobs of the accepted writes of a commit, each hash once. */
export function acceptedBlobs(writes: readonly RunWrite[], results: readonly (CommitResult | undefined)[]): PayloadBlob[] {
  let out: Map<string, PayloadBlob> | undefined;
  writes.forEach((write, i) => {
    if (!write.blobs || write.blobs.length === 0 || !results[i]?.ok) return;
    out ??= new Map();
    for (const blob of write.blobs) out.set(blob.hash, blob);
  });
  return out ? [...out.values()] : [];
}

/** Every blob hash referenced by a stored payload, as SQL (`?` parameters: none): one scan of each payload column. */
export function referencedHashesSql(): string {
  const start = BLOB_REF_PREFIX.length + 1;
  const like = `'${BLOB_REF_PREFIX}%'`;
  const from = (table: string, column: string) => `SELECT substr(${column}, ${start}, 64) FROM ${table} WHERE ${column} LIKE ${like}`;
  return [from("journal", "payload"), from("runs", "input"), from("runs", "output"), from("inbox", "payload")].join(" UNION ALL ");
}
