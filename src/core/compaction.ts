import type { JournalEntry } from "./journal.js";
import { isCheckpoint, readForResume } from "./resume.js";

/**
 * What compaction has removed from a run's journal (see `planCompaction` in core/compaction.ts): the marker a run
 * carries once superseded loop entries were deleted, so the timeline, `cairn show`, export and fork
 * say "N entries compacted" instead of silently missing them. Seqs are never renumbered: the removed
 * entries leave gaps below {@link JournalCompaction.coveredSeq}.
 */
export interface JournalCompaction {
  /** Entries removed so far. */
  entries: number;
  /** Bytes of their stored payloads. */
  bytes: number;
  /**
   * The newest loop checkpoint (`loop.snapshot` / `loop.completed`) whose superseded entries were
   * removed: every removed entry has a lower seq, and a fork must cut at this seq or later.
   */
  coveredSeq: number;
  /** The newest checkpoint compaction has looked at; later passes start above it. */
  checkedSeq: number;
  /** When entries were last removed (epoch ms). */
  at: number;
}

/** What one `RetentionStore.compactJournal` call did. */
export interface CompactionOutcome {
  /** Entries this call deleted (not those a racing compaction deleted first). */
  deleted: number;
  /** Bytes of their stored payloads. */
  bytes: number;
  /** The run's marker after the call; undefined while nothing was ever removed. */
  compaction?: JournalCompaction;
}

/** What `planCompaction` decided for one run (the plan `RetentionStore.compactJournal` applies). */
export interface CompactionPlan {
  /** Seqs to delete, ascending (may be empty when everything superseded must stay). */
  seqs: number[];
  /** Bytes of their stored payloads. */
  bytes: number;
  /** The checkpoint that covers them: the new {@link JournalCompaction.checkedSeq} (and `coveredSeq` when `seqs` is not empty). */
  checkpointSeq: number;
}

/**
 * Kinds compaction may remove, when superseded: what a loop iteration writes and a resume from a later
 * checkpoint never reads. Everything else stays even when superseded, because another reader folds
 * it: `run.created`/`run.retried`/`run.forked` (views, retry, fork), `agent.messages` (the message
 * rows export, import, fork and dry replay rebuild), `event.received` (the inbox row's `consumedSeq`),
 * `human.*`, `child.*`, `outbox.emitted`, `compensation.*` and any kind added later.
 */
const REMOVABLE_KINDS: ReadonlySet<string> = new Set([
  "run.claimed",
  "run.released",
  "run.suspended",
  "step.started",
  "step.completed",
  "step.failed",
  "step.reconciled",
  "sleep.started",
  "sleep.completed",
  "event.waiting",
  "event.timedout",
  "value.recorded",
  "loop.started",
  "loop.snapshot",
  "loop.completed",
]);

/**
 * Op keys whose entries an agent's transcript and spend are folded from (`agent/transcript-view.ts`,
 * `agent/run-costs.ts`): its model and summary calls, tool calls and tool approvals. They stay, so
 * `cairn show`, the dashboard and the cost views still show the whole conversation and its price.
 */
const HISTORY_KEY = /(?:^|\/)(?:model#\d+|summarize#\d+|tool-[^/]+#\d+|approve-[^/]+#\d+)$/;

/** True for an entry compaction may delete once a checkpoint supersedes it. */
export function isRemovable(entry: Pick<JournalEntry, "kind" | "opKey">): boolean {
  return REMOVABLE_KINDS.has(entry.kind) && !(entry.opKey !== null && HISTORY_KEY.test(entry.opKey));
}

/**
 * Plans the compaction of one run's journal (the entries as stored, in seq order): the entries
 * superseded by a loop checkpoint written before `checkpointBefore` (epoch ms) and newer than
 * `checkedSeq`, which no resume reads again, restricted to {@link isRemovable} kinds. "Superseded" is
 * exactly what {@link readForResume} skips, checked twice: on the journal up to the checkpoint (so the
 * checkpoint really covers them) and on the whole journal (so no later entry needs them). The
 * checkpoint, the entries after it, `run.created`, the seqs it keeps (other ops' entries, open human
 * requests and children, saga registrations) always stay. With `keepCheckpoints` n > 1, the n - 1
 * newest checkpoints of the run (of any of its loops) are not used, so a fork can still cut at or
 * between them. Undefined when no such checkpoint exists.
 */
export async function planCompaction(
  journal: readonly JournalEntry[],
  checkpointBefore: number,
  checkedSeq = 0,
  keepCheckpoints = 1,
): Promise<CompactionPlan | undefined> {
  // The newest `keepCheckpoints - 1` checkpoints keep what lies between them (forkable), whatever their age.
  const checkpoints = journal.filter((entry) => isCheckpoint(entry.kind));
  const eligible = checkpoints.slice(0, Math.max(0, checkpoints.length - (keepCheckpoints - 1)));
  const checkpoint = eligible.findLast((entry) => entry.seq > checkedSeq && entry.at < checkpointBefore);
  if (!checkpoint) return undefined;
  const upTo = journal.filter((entry) => entry.seq <= checkpoint.seq);
  const [covered, needed] = await Promise.all([seqsNeeded(upTo), seqsNeeded(journal)]);
  const doomed = upTo.filter((entry) => entry.seq < checkpoint.seq && entry.seq > 1 && !covered.has(entry.seq) && !needed.has(entry.seq) && isRemovable(entry));
  return {
    seqs: doomed.map((entry) => entry.seq),
    bytes: doomed.reduce((sum, entry) => sum + Buffer.byteLength(entry.payload), 0),
    checkpointSeq: checkpoint.seq,
  };
}

/** The seqs a resume of this journal reads. */
async function seqsNeeded(entries: readonly JournalEntry[]): Promise<Set<number>> {
  const read = await readForResume({
    latestCheckpointBelow: async (below) => entries.findLast((entry) => entry.seq < below && isCheckpoint(entry.kind)),
    range: async (from, below) => entries.filter((entry) => entry.seq >= from && entry.seq < below),
    seqs: async (seqs) => {
      const wanted = new Set(seqs);
      return entries.filter((entry) => wanted.has(entry.seq));
    },
  });
  return new Set(read.map((entry) => entry.seq));
}

/**
 * Where a fork of a compacted run may cut: the first seq at or after which every entry up to the cut
 * is either present or superseded by a checkpoint the fork copies. Undefined for a run never compacted.
 */
export function firstForkableSeq(compaction: JournalCompaction | undefined): number | undefined {
  return compaction && compaction.entries > 0 ? compaction.coveredSeq : undefined;
}
