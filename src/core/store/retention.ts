import type { CompactionOutcome, CompactionPlan, JournalCompaction } from "../compaction.js";
import type { JournalEntry } from "../journal.js";
import type { RunRecord, RunStatus } from "../run.js";
import type { HumanRequest } from "./human-requests.js";
import type { InboxEvent } from "./inbox.js";

/** Retention, export and import: pruning finished runs and moving a run's rows between stores. Part of the {@link Store} port. */
export interface RetentionStore {
  /**
   * Runs that {@link RetentionStore.deleteRuns} may delete, oldest finished first: status in `query.statuses`
   * (terminal ones only), `finishedAt < query.finishedBefore`, of `query.workflow` if given, and
   * neither a child whose parent is live nor a parent with a live child, nor a run that continued as new
   * while its chain has a live run (any live `<base>~<n>`, see `chainBase`).
   */
  listPrunableRuns(query: PruneQuery): Promise<RunRecord[]>;
  /**
   * Deletes runs and every row that belongs to them (journal, inbox, human requests, full-text
   * index), in one transaction. Each run is deleted only if, at delete time, it is still terminal
   * with the `lastSeq` it was selected with (a run retried since then has a longer journal and
   * survives) and is still prunable (no live parent, no live child, no live run of its chain). Returns the deleted ids.
   */
  deleteRuns(runs: readonly { runId: string; lastSeq: number }[]): Promise<string[]>;
  /**
   * The rows of a run, for an export: the run, its journal, inbox and human requests.
   * Undefined when the run does not exist. One read transaction where the backend has them.
   */
  readRunRows(runId: string): Promise<RunImport | undefined>;
  /**
   * Inserts a run and its rows verbatim (journal seqs, statuses and times as given; inbox rows get
   * new ids; search text is indexed from `step.completed` entries), all or nothing. No projection,
   * no side effects. Throws RunConflictError when the run id, or one of its human request ids, exists.
   */
  importRun(data: RunImport): Promise<void>;
  /**
   * Runs (live or finished) that have a loop checkpoint written before `query.checkpointBefore`
   * above the checkpoint their last compaction looked at (`checkedSeq`, 0 for none): the candidates
   * of `engine.compact`, in run-id order after `query.afterRunId`.
   */
  listCompactableRuns(query: CompactQuery): Promise<CompactCandidate[]>;
  /**
   * Deletes the journal entries with `plan.seqs` (all below `plan.checkpointSeq`, which must exist)
   * and records the run's {@link JournalCompaction} in one transaction; seqs are not renumbered and
   * the run row is not touched, so a worker writing the run meanwhile is unaffected. Counts only
   * entries it really deleted (two compactions racing count each entry once). The caller decides what
   * is superseded (`planCompaction` in core/compaction.ts). Undefined when the run does not exist.
   */
  compactJournal(runId: string, plan: CompactionPlan, now: number): Promise<CompactionOutcome | undefined>;
  /** The run's compaction marker, or undefined when none of its entries was ever compacted. */
  readCompaction(runId: string): Promise<JournalCompaction | undefined>;
}

/** Filters of {@link RetentionStore.listCompactableRuns}. */
export interface CompactQuery {
  /** Only checkpoints written strictly before this time (epoch ms). */
  checkpointBefore: number;
  /** Continue after this run id (paging). */
  afterRunId?: string;
  /** Only this run. */
  runId?: string;
  /** At most this many runs. */
  limit: number;
}
/** One candidate of {@link RetentionStore.listCompactableRuns}. */
export interface CompactCandidate {
  runId: string;
  /** The newest checkpoint its last compaction looked at, 0 for none. */
  checkedSeq: number;
}

/** The rows of one run, as {@link Store.readRunRows} reads them and {@link Store.importRun} inserts them. */
export interface RunImport {
  run: RunRecord;
  /** The whole journal, seq 1…lastSeq, less the entries compaction removed (see `compaction`). */
  journal: JournalEntry[];
  /** What compaction removed from the journal; absent for a run never compacted. */
  compaction?: JournalCompaction;
  /** Inbox rows in arrival order; an importing store gives them new ids. */
  inbox: Omit<InboxEvent, "id">[];
  humanRequests: HumanRequest[];
}
/** Filters of {@link Store.listPrunableRuns}. */
export interface PruneQuery {
  /** Only runs finished strictly before this time (epoch ms). */
  finishedBefore: number;
  /** Statuses to prune; non-terminal ones are ignored. */
  statuses: readonly RunStatus[];
  workflow?: string;
  /** At most this many runs. */
  limit: number;
}
