/** Blobs: content-addressed large payloads (docs/operations/payloads.md). Part of the {@link Store} port. */
export interface BlobStore {
  /** The blobs with these SHA-256 hashes that exist (any order; missing ones are left out). */
  readBlobs(hashes: readonly string[]): Promise<PayloadBlob[]>;
  /**
   * Deletes blobs that no journal entry, run (input, output) or inbox row references any more
   * and that were last written before `before` (epoch ms), so a blob a transaction is about to
   * reference is never taken. Returns how many were deleted. For `cairn prune` and maintenance.
   */
  deleteUnreferencedBlobs(before: number): Promise<number>;
}

/**
 * A content-addressed payload: `body` is stored under the SHA-256 (hex) of the payload text it
 * holds (after decoding by the payload codec, when one encrypted it). See docs/operations/payloads.md.
 */
export interface PayloadBlob {
  hash: string;
  /** UTF-8 byte length of the payload text. */
  size: number;
  /** The stored text: the payload itself, or its encrypted form. */
  body: string;
}
