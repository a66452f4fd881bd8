import type { BlobStore, PayloadBlob } from "../../core/store.js";
import { DELETE_UNREFERENCED_BLOBS, INSERT_BLOBS, READ_BLOBS } from "./postgres-blobs-queries.js";
import type { PostgresConnection } from "./postgres-connection.js";
import type { Tx } from "./postgres-tx.js";

/** The {@link BlobStore} part of {@link PostgresStore}: content-addressed payloads. */
export class PostgresBlobs implements BlobStore {
  constructor(private readonly db: PostgresConnection) {}

  /** See {@link Store.readBlobs}. */
  async readBlobs(hashes: readonly string[]): Promise<PayloadBlob[]> {
    if (hashes.length === 0) return [];
    return this.db.query<PayloadBlob>(READ_BLOBS, [hashes]);
  }

  /** See {@link Store.deleteUnreferencedBlobs}. */
  async deleteUnreferencedBlobs(before: number): Promise<number> {
    return this.db.tx(before, async (tx) => (await tx.query(DELETE_UNREFERENCED_BLOBS, [before])).length);
  }
}

/** Writes `blobs` in the transaction `tx` (nothing when there are none). */
export async function insertBlobs(tx: Tx, blobs: readonly PayloadBlob[] | undefined): Promise<void> {
  if (!blobs || blobs.length === 0) return;
  await tx.query(INSERT_BLOBS, [blobs.map((b) => b.hash), blobs.map((b) => b.size), blobs.map((b) => b.body), tx.now]);
}
