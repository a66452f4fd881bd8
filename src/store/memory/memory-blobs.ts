import { BLOB_REF_PREFIX } from "../../core/payloads.js";
import type { BlobStore, PayloadBlob } from "../../core/store.js";
import type { MemoryTables } from "./memory-tables.js";

/** The {@link BlobStore} part of {@link MemoryStore}: content-addressed payloads (written with `MemoryTables.putBlobs`). */
export class MemoryBlobs implements BlobStore {
  constructor(private readonly t: MemoryTables) {}

  /** See {@link Store.readBlobs}. */
  async readBlobs(hashes: readonly string[]): Promise<PayloadBlob[]> {
    return hashes.flatMap((hash) => {
      const blob = this.t.blobs.get(hash);
      return blob ? [{ hash: blob.hash, size: blob.size, body: blob.body }] : [];
    });
  }

  /** See {@link Store.deleteUnreferencedBlobs}. */
  async deleteUnreferencedBlobs(before: number): Promise<number> {
    const referenced = new Set<string>();
    const note = (text: string | null) => {
      if (text?.startsWith(BLOB_REF_PREFIX)) referenced.add(text.slice(BLOB_REF_PREFIX.length, BLOB_REF_PREFIX.length + 64));
    };
    for (const entries of this.t.journal.values()) for (const entry of entries) note(entry.payload);
    for (const run of this.t.runs.values()) {
      note(run.input);
      note(run.output);
    }
    for (const event of this.t.inbox.values()) note(event.payload);
    let deleted = 0;
    for (const [hash, blob] of this.t.blobs) {
      if (blob.usedAt < before && !referenced.has(hash)) {
        this.t.blobs.delete(hash);
        deleted++;
      }
    }
    return deleted;
  }
}
