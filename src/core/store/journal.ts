import type { JournalEntry, NewEntry } from "../journal.js";
import type { PayloadBlob } from "./blobs.js";

/** The journal: reading a run's entries and appending them by group commit, fenced by the lease epoch. Part of the {@link Store} port. */
export interface JournalStore {
  /** Entries of one run in seq order, optionally after a seq and limited. */
  readJournal(runId: string, options?: { afterSeq?: number; limit?: number; previewBytes?: number }): Promise<JournalEntry[]>;
  /**
   * The entries a worker needs to resume a run, in seq order: all of them except those a loop
   * checkpoint supersedes (see `core/resume.ts`). Implemented with indexed reads only, so its cost
   * follows what it returns, not the length of the run's history.
   */
  readJournalForResume(runId: string): Promise<JournalEntry[]>;
  /**
   * Full-text search over the run's indexed step results (`step.completed` entries with `text`):
   * entries matching any of the query's words, most relevant first.
   */
  searchJournal(runId: string, query: string, limit: number): Promise<JournalTextHit[]>;
  /**
   * How many {@link JournalStore.commit} transactions an engine may keep in flight at once on this store
   * (its pool of writer connections); absent means one, as for a single-writer store. An engine
   * never has two writes of one run in flight at once, whatever this is.
   */
  readonly commitWriters?: number;
  /**
   * Group commit: applies every write in one transaction where the backend allows.
   * A write whose epoch is stale, or whose run is terminal, is skipped and reported
   * `{ ok: false }`; the others still commit. Results are in the order of `writes`.
   */
  commit(writes: RunWrite[], now: number): Promise<CommitResult[]>;
  /**
   * Push notices of one run's journal growth written by any process (PostgreSQL LISTEN/NOTIFY; the
   * SQLite and memory stores have none): `listener` is called after a transaction that appended
   * entries of `runId` commits (and, rarely, when it may have: a notice naming too many runs, or
   * notices missed while reconnecting). Subscribing makes writers send notices for this run only,
   * so commits of runs no one subscribed to pay nothing. A notice is a hint to read the journal,
   * never its content: it may come late, twice, or (until writers learn of the subscription) not at
   * all, so readers keep a slower poll. Returns an unsubscribe function.
   * @example
   * const stop = store.onJournal?.("run-1", () => void readNewEntries("run-1"));
   */
  onJournal?(runId: string, listener: () => void): () => void;
}

/** Appends for one run, fenced by the writer's lease epoch. */
export interface RunWrite {
  runId: string;
  epoch: number;
  entries: NewEntry[];
  /** Blobs the entries reference, inserted (deduplicated by hash) in the same transaction, only if the write is accepted. */
  blobs?: readonly PayloadBlob[];
}
/** Outcome of one {@link RunWrite}. */
export type CommitResult = { ok: true; firstSeq: number; lastSeq: number } | { ok: false; reason: "lease-lost" | "finished" | "not-found" };
/** One hit of {@link Store.searchJournal}. */
export interface JournalTextHit {
  seq: number;
  opKey: string;
  text: string;
}
