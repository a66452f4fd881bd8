import type { JournalCompaction } from "../compaction.js";
import type { QueueStat, RunFlow } from "../flow-control.js";
import type { EntryKind, JournalEntry } from "../journal.js";
import type { RunRecord, RunStatus } from "../run.js";
import type { PayloadBlob } from "./blobs.js";

/** Runs: creating them (alone, in a batch, with a copied journal, debounced) and reading their rows. Part of the {@link Store} port. */
export interface RunStore {
  /**
   * Creates a run with its `run.created` entry (seq 1), unless a run with that id exists:
   * then returns the existing row and `created: false` without writing anything.
   */
  createRun(run: NewRun, now: number): Promise<{ run: RunRecord; created: boolean }>;
  /**
   * {@link RunStore.createRun} for several runs in one transaction, in order (a runId repeated in
   * `runs` is created once, then found). Results are in the order of `runs`. Any error
   * rolls back the whole batch.
   */
  createRuns(runs: readonly NewRun[], now: number): Promise<{ run: RunRecord; created: boolean }[]>;
  /**
   * Creates a run whose journal starts as a copy (time travel, `engine.fork`): its `run.created`
   * (seq 1, from `run`), then `entries` verbatim at seq 2, 3, … with their own kind, op key,
   * payload, epoch and time. Unless a run with that id exists: then returns the existing row and
   * `created: false` without writing anything.
   *
   * The copied entries are history, not new facts: they are not projected and have no side effects
   * (no inbox row is consumed, no child run or human request is created), except that
   * `step.completed` search text is indexed so `searchJournal` finds it in the new run too.
   * The row is `pending`, unclaimed, at `leaseEpoch` = the highest epoch among `entries`
   * (so later claims keep epochs increasing), `lastSeq` = the last entry's seq. `run.claimFor` is ignored.
   * Entries with a `seq` keep it (a copy of a compacted journal): then `compaction` is the new run's
   * compaction marker, stored in the same transaction.
   */
  createRunWithJournal(
    run: NewRun,
    entries: readonly CopiedEntry[],
    now: number,
    compaction?: JournalCompaction,
  ): Promise<{ run: RunRecord; created: boolean }>;
  /**
   * Debounced start (flow control). If a run of `run.workflow` with debounce key `key` exists that was never
   * claimed (suspended at epoch 0, waiting for its start), appends `run.debounced { input, startAt }` to it,
   * replaces its input and moves its start (`wakeAt`) to `startAt`, and returns it with `created: false`.
   * Otherwise creates `run` (with its `flow`; `claimFor` is ignored) with `run.created` then `run.debounced`,
   * suspended until `startAt`, and returns it with `created: true`. Atomic: concurrent starts with one key
   * coalesce into one run; a run a worker already claimed is never changed.
   */
  debounceRun(run: NewRun, key: string, startAt: number, now: number): Promise<{ run: RunRecord; created: boolean }>;
  getRun(runId: string): Promise<RunRecord | undefined>;
  /**
   * How many runs there are of each (workflow, status) pair that has any; for gauges such as
   * `/metrics`, and (with `filter`, the filters of {@link listRuns}) for a listing's total. One
   * grouped query, no rows loaded.
   */
  countRuns(filter?: RunFilter): Promise<RunCount[]>;
  /**
   * Flow control: for each (queue, concurrency key) with unfinished runs, how many are running, waiting
   * (pending, or suspended and due at `now`) and suspended (not due). Ordered by queue, then key (nulls first).
   */
  queueStats(now: number): Promise<QueueStat[]>;
  /** Newest first (createdAt desc, runId desc), paginated by an opaque cursor. */
  listRuns(query: ListRunsQuery): Promise<RunPage>;
  /**
   * Journal entries of one kind belonging to runs created at or after `createdAfter`, each with its
   * run's workflow, parent and creation time; ordered by (run createdAt, runId, seq) and keyset-paged
   * by `after` (the last row of the previous page). For aggregates over a time range, such as model
   * spend on the dashboard's overview: served by the runs' createdAt index and the journal's key,
   * never a scan of the whole journal.
   */
  listRunEntries(query: RunEntriesQuery): Promise<RunEntry[]>;
}

/** A journal entry to copy into a new run by {@link Store.createRunWithJournal}: everything but its run and seq. */
export type CopiedEntry = Omit<JournalEntry, "runId" | "seq"> & {
  /** The entry's seq in the new journal; default: the one after the previous entry. Given when copying a compacted journal, whose seqs have gaps. */
  seq?: number;
  /** The entry's decoded data, when the caller has it: stores project `agent.messages` rows from it (its payload may be a blob reference). */
  data?: unknown;
};
/** Filters and paging of {@link Store.listRunEntries}. */
export interface RunEntriesQuery {
  kind: EntryKind;
  /** Only runs created at or after this time (ms since the epoch). */
  createdAfter: number;
  /** Continue after this row of a previous page. */
  after?: { createdAt: number; runId: string; seq: number };
  /** At most this many rows (1 to 1000). */
  limit: number;
}
/** A row of {@link Store.listRunEntries}: a journal entry and the run it belongs to. */
export interface RunEntry {
  entry: JournalEntry;
  workflow: string;
  parentRunId: string | null;
  /** The run's createdAt. */
  createdAt: number;
}
/** One group of {@link Store.countRuns}. */
export interface RunCount {
  workflow: string;
  status: RunStatus;
  count: number;
}
/** A run to create. */
export interface NewRun {
  runId: string;
  workflow: string;
  version: string;
  /** Encoded input. */
  input: string;
  parentRunId?: string | null;
  parentOpKey?: string | null;
  /** Blobs the run's payloads reference, inserted (deduplicated) with the run, only if it is created. */
  blobs?: readonly PayloadBlob[];
  /**
   * Create the run already claimed by this worker, as {@link Store.claimRuns} would claim it
   * (`run.claimed` follows `run.created` in the same transaction). Ignored when the run exists.
   */
  claimFor?: { workerId: string; leaseMs: number };
  /** The run's queue, concurrency key and priority (flow control); absent for a run without a queue. Not combined with `claimFor`. */
  flow?: RunFlow;
  /** Tags (validated by `core/tags.ts`), journaled in `run.created` and stored in an indexed table. */
  tags?: Record<string, string>;
  /** The run this one continues (`ctx.continueAsNew`), journaled in `run.created`. */
  continuedFrom?: string;
  /**
   * A delayed start (epoch ms): the run is created suspended until then, with a `run.suspended` entry at
   * seq 2, and no worker claims it earlier. Ignored with `claimFor`.
   */
  startAt?: number;
  /** A deadline (epoch ms): a row that {@link Store.listDueDeadlines} lists once due, inserted with the run. */
  deadlineAt?: number;
}
/** Filters for {@link Store.listRuns}. */
export interface ListRunsQuery {
  status?: RunStatus[];
  workflow?: string;
  /** Only children of this run; `null`: only top-level runs (those without a parent). */
  parentRunId?: string | null;
  /**
   * Only runs whose id starts with this text (case-sensitive, no wildcards: `%` and `_` are plain
   * characters). A namespaced API token lists runs with `runIdPrefix: "<namespace>/"`, filtered in
   * the query so a page is never short.
   */
  runIdPrefix?: string;
  /**
   * Only runs whose id, workflow name, error message, encoded input or a tag (written `key:value`)
   * contains this text, ignoring case (a plain substring: `%` and `_` are not wildcards). SQLite
   * folds the case of ASCII letters only; an input or error sealed by `withPayloads` encryption, or
   * offloaded, is not searched.
   */
  q?: string;
  createdAfter?: number;
  createdBefore?: number;
  /** Only runs that have every one of these tags (exact key and value), through the tag index. */
  tags?: Record<string, string>;
  /**
   * Leave out system runs (workflow names starting with `SYSTEM_WORKFLOW_PREFIX`, `cairn.`, such as
   * alert runs), unless `workflow` is given: a filter on a system workflow still lists its runs.
   * Default false (every run). The API, the CLI and the dashboard set it, so people's figures are
   * about their own runs.
   */
  excludeSystem?: boolean;
  /** Default 50, at most 1000. */
  limit?: number;
  /**
   * For listings: an offloaded payload larger than this is not loaded; it reads as an elided marker
   * (core/payloads.ts `elidedMarker`) with its size. Stores without offloading ignore it.
   */
  previewBytes?: number;
  /** From a previous page's `nextCursor`. */
  cursor?: string;
}
/** The filters of a {@link ListRunsQuery}, without paging: what {@link Store.countRuns} counts. */
export type RunFilter = Omit<ListRunsQuery, "limit" | "cursor" | "previewBytes">;

/** A page of runs. */
export interface RunPage {
  runs: RunRecord[];
  /** Present when more runs match. */
  nextCursor?: string;
}
