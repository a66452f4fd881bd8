import type { BlobStore, PayloadBlob } from "../../core/store.js";
import { DELETE_UNREFERENCED_BLOBS, READ_BLOBS } from "./sqlite-blobs-queries.js";
import type { SqliteConnection } from "./sqlite-connection.js";

/** The {@link BlobStore} part of {@link SqliteStore}: content-addressed payloads (written by `SqliteWriter.insertBlobs`). */
export class SqliteBlobs implements BlobStore {
  constructor(private readonly c: SqliteConnection) {}

  /** See {@link Store.readBlobs}. */
  async readBlobs(hashes: readonly string[]): Promise<PayloadBlob[]> {
    if (hashes.length === 0) return [];
    return this.c.q.prepared(READ_BLOBS).all(JSON.stringify(hashes)) as PayloadBlob[];
  }

  /** See {@link Store.deleteUnreferencedBlobs}. */
  async deleteUnreferencedBlobs(before: number): Promise<number> {
    return this.c.immediate(() => this.c.q.prepared(DELETE_UNREFERENCED_BLOBS).run(before).changes);
  }
}
