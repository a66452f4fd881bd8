/**
 * The part of the Store port that carries live deltas (a model's partial output, `step-progress`)
 * from a worker in one process to the run streams of a server in another. Nothing here is
 * journaled: rows are ephemeral, bounded, and dropped once the step's outcome is journaled.
 *
 * Each process that shares a store names itself with an `origin` (the engine's `instanceId`).
 * A server with open streams of a run **advertises** it ({@link LiveDeltaStore.advertiseLiveDeltas},
 * renewed while it streams); a worker that is generating asks which runs other origins advertise
 * ({@link LiveDeltaStore.listStreamedRuns}) and writes deltas only for those, so a run nobody
 * streams costs its worker no write at all. Readers poll {@link LiveDeltaStore.readLiveDeltas} by
 * id, woken early by {@link LiveDeltaStore.onLiveDeltas} where the store pushes (PostgreSQL NOTIFY).
 *
 * A step attempt's records, in id order, are: one `full` record (its whole output so far, written
 * when a reader first wants it, or at the attempt's first delta), then `more` records (what came
 * since); an `end` record says its outcome is journaled (its earlier records are deleted with it).
 * A newer attempt's `full` record replaces an older attempt's output (a crash, a retry).
 */
export interface LiveDeltaStore {
  /**
   * Says that `origin` streams `runIds` until `expiresAt` (epoch ms), inserting or renewing its rows.
   * Readers renew well before expiry; a reader that died stops costing writers once its rows expire.
   */
  advertiseLiveDeltas(origin: string, runIds: readonly string[], expiresAt: number): Promise<void>;
  /** Withdraws `origin`'s advertisements of `runIds`, or all of them when `runIds` is omitted. */
  retireLiveDeltas(origin: string, runIds?: readonly string[]): Promise<void>;
  /** The runs some origin other than `origin` advertises at `now` (rows not yet expired), in no particular order. */
  listStreamedRuns(origin: string, now: number): Promise<string[]>;
  /**
   * Appends `records` written by `origin`, in order, in one transaction. An `end` record first deletes
   * every earlier record of its run and op key (any attempt), so a step's rows go once its outcome is
   * journaled; the `end` record itself stays until {@link LiveDeltaStore.pruneLiveDeltas}, so readers
   * that poll later still learn of it.
   */
  writeLiveDeltas(origin: string, records: readonly NewLiveDelta[], now: number): Promise<void>;
  /**
   * Records of `runIds` with `id > afterId` that `origin` did not write, in id order, at most `limit`
   * (default 1000). Ids only grow, so a reader resumes after the last id it saw.
   */
  readLiveDeltas(runIds: readonly string[], afterId: number, origin: string, limit?: number): Promise<LiveDeltaRecord[]>;
  /**
   * Deletes the records of every step attempt whose newest record is older than `before`, and
   * advertisements that expired before it. Returns how many records went.
   */
  pruneLiveDeltas(before: number): Promise<number>;
  /**
   * Push hint (PostgreSQL NOTIFY): `listener` is called after records were written by any process
   * (or may have been: after a reconnection). A hint to read, never the records. Stores without
   * push omit it and readers poll. Returns an unsubscribe function.
   */
  onLiveDeltas?(listener: () => void): () => void;
}

/** What a record of a step attempt says (see {@link LiveDeltaStore}). */
export type LiveDeltaKind = "full" | "more" | "end";

/** A record to write with {@link LiveDeltaStore.writeLiveDeltas}. */
export interface NewLiveDelta {
  runId: string;
  opKey: string;
  attempt: number;
  kind: LiveDeltaKind;
  /** The progress pieces (`full`: the attempt's output so far, coalesced; `more`: the pieces since; `end`: none). JSON-serializable. */
  pieces: readonly unknown[];
}

/** A record as {@link LiveDeltaStore.readLiveDeltas} returns it. */
export interface LiveDeltaRecord extends NewLiveDelta {
  /** Increasing across the store; never reused. */
  id: number;
  origin: string;
  at: number;
}
