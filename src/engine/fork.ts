import type { JournalCompaction } from "../core/compaction.js";
import { PayloadTooLargeError, ValidationError } from "../core/errors.js";
import { newEntry, type EntryData, type JournalEntry } from "../core/journal.js";
import type { RunRecord } from "../core/run.js";
import { decode, encode } from "../core/serialize.js";
import type { CopiedEntry } from "../core/store.js";

/**
 * Options of `engine.fork` (time travel).
 * @example
 * // Run "thread-42" again from seq 12, as if the step journaled at seq 9 had returned a fixed value:
 * const fork = await engine.fork("thread-42", { atSeq: 12, patch: { seq: 9, result: { score: 0.9 } } });
 * console.log(await fork.result());
 */
export interface ForkOptions {
  /**
   * The last entry of the original journal to keep (1 … its last seq). Entries after it are dropped;
   * the fork replays the kept ones and runs the rest of the workflow live, under the code registered now.
   */
  atSeq: number;
  /** Replaces the result of one `step.completed` entry at or before `atSeq`: that is what the workflow sees. */
  patch?: ForkPatch;
  /** The new run's id. Default: a random UUID. Forking again with the same id, source, seq and patch returns the same run. */
  runId?: string;
}

/** What {@link planFork} takes: the fork's options, and the workflow version the fork runs under. */
export interface ForkPlanOptions extends Omit<ForkOptions, "patch"> {
  patch?: ForkPatch;
  /** The version the fork is pinned to (the engine's current one for the workflow); default: the source's. */
  version?: string;
  /** The source's compaction marker, when entries up to `atSeq` were compacted: the cut must not fall inside the compacted range. */
  compaction?: JournalCompaction;
}

/** An edited step outcome for {@link ForkOptions.patch}. */
export interface ForkPatch {
  /** Seq of a `step.completed` entry of the original run, at or before `atSeq`. */
  seq: number;
  /** The result the step returns in the fork (plain data the journal can hold). */
  result: unknown;
}

/** What a fork writes: the copied entries (seq 2 … atSeq, then `run.forked`). */
export interface ForkPlan {
  copies: CopiedEntry[];
  forked: EntryData["run.forked"];
  /** The fork's compaction marker, when the copied journal has the source's compaction gaps. */
  compaction?: JournalCompaction;
}

/** Op kinds whose open state belongs to the original run and cannot be copied (see {@link planFork}). */
const OPENERS: Record<string, { closers: string[]; why: string }> = {
  "child.started": {
    closers: ["child.completed", "child.failed"],
    why: "a child run started there belongs to the original run, and the fork could never receive its result",
  },
  "human.requested": {
    closers: ["human.answered", "human.timedout"],
    why: "the question asked there belongs to the original run, and an answer to it could never reach the fork",
  },
};

/**
 * Plans a fork of `source` at `atSeq`: which entries the new run's journal copies. Pure: no I/O.
 *
 * - seq 1 (`run.created`) is written afresh by the store: same workflow, version and input, no parent.
 * - seqs 2 … `atSeq` are copied verbatim, run-level entries (claims, suspensions, even a terminal
 *   entry when `atSeq` is past it) included, so every seq stays the same: loop checkpoints refer to
 *   seqs, and the timeline reads like the original's. They are history; replay skips them.
 * - then `run.forked` marks the cut and makes the run pending again.
 *
 * A cut may fall anywhere a crash could: an intent without its outcome is reconciled by its effect
 * class, as after a crash (with the fork's own idempotency keys, which include its runId). It may not
 * fall inside a child run or an unanswered human request, which belong to the original run, nor
 * below the checkpoint that covers a compacted range (`options.compaction`): the fork keeps the
 * source's seqs, gaps included, and carries its compaction marker.
 * `journal` holds the entries up to `atSeq` at least; `readAfter` reads the later ones, needed only to suggest a better cut.
 * @throws ValidationError for an `atSeq` or `patch` that does not fit the journal.
 */
export async function planFork(
  source: RunRecord,
  journal: readonly JournalEntry[],
  readAfter: (seq: number) => Promise<JournalEntry[]>,
  options: ForkPlanOptions,
  now: number,
  maxPayloadBytes: number,
): Promise<ForkPlan> {
  const { atSeq, patch, compaction } = options;
  const runId = source.runId;
  const kept = journal.filter((entry) => entry.seq <= atSeq);
  if (atSeq > source.lastSeq || (kept.at(-1)?.seq !== atSeq && !compaction)) {
    throw new ValidationError(`fork: atSeq ${atSeq} is past the end of run "${runId}", whose last entry is seq ${source.lastSeq}.`);
  }
  const gaps = atSeq - kept.length;
  if (gaps > 0 && (!compaction || atSeq < compaction.coveredSeq)) {
    const from = compaction ? `; fork at seq ${compaction.coveredSeq} or later` : "";
    throw new ValidationError(
      `fork: atSeq ${atSeq} falls inside the compacted part of run "${runId}": entries before seq ${compaction?.coveredSeq ?? atSeq} were deleted by compaction (superseded by a loop checkpoint), so the fork could not replay them${from}.`,
    );
  }
  await checkCut(runId, kept, atSeq, readAfter);
  let patched: { seq: number; payload: string } | undefined;
  if (patch) {
    const target = kept.find((entry) => entry.seq === patch.seq);
    if (patch.seq > atSeq || !target) {
      throw new ValidationError(`fork: patch.seq ${patch.seq} is after atSeq ${atSeq}; only a step result the fork keeps can be patched.`);
    }
    if (target.kind !== "step.completed") {
      throw new ValidationError(`fork: patch.seq ${patch.seq} is a ${target.kind} entry of run "${runId}"; only step.completed results can be patched.`);
    }
    // The search text described the old result: it goes, so ctx.searchJournal cannot find stale words.
    const { text: _, ...data } = decode<EntryData["step.completed"]>(target.payload);
    let payload: string;
    try {
      payload = encode({ ...data, result: patch.result });
    } catch (error) {
      throw new ValidationError(`fork: patch.result cannot be stored: ${(error as Error).message}`);
    }
    const bytes = Buffer.byteLength(payload);
    if (bytes > maxPayloadBytes) throw new PayloadTooLargeError("fork: patch.result", bytes, maxPayloadBytes);
    patched = { seq: patch.seq, payload };
  }
  const copies: CopiedEntry[] = kept.slice(1).map((entry) => ({
    seq: entry.seq,
    kind: entry.kind,
    opKey: entry.opKey,
    payload: entry.seq === patched?.seq ? patched.payload : entry.payload,
    epoch: entry.epoch,
    at: entry.at,
  }));
  const forked: EntryData["run.forked"] = patched ? { fromRunId: runId, atSeq, patchedSeq: patched.seq } : { fromRunId: runId, atSeq };
  if (options.version !== undefined && options.version !== source.version) forked.fromVersion = source.version;
  const marker = newEntry("run.forked", null, forked);
  copies.push({ seq: atSeq + 1, kind: marker.kind, opKey: null, payload: marker.payload, epoch: Math.max(0, ...copies.map((c) => c.epoch)), at: now });
  // The fork has the source's gaps below the cut: it carries their marker (what went before atSeq).
  if (gaps > 0 && compaction) return { copies, forked, compaction: { ...compaction, entries: gaps } };
  return { copies, forked };
}

/** Refuses a cut inside an op whose open state lives outside the journal (a child run, a human request). */
async function checkCut(runId: string, kept: readonly JournalEntry[], atSeq: number, readAfter: (seq: number) => Promise<JournalEntry[]>): Promise<void> {
  const open = new Map<string, JournalEntry>();
  for (const entry of kept) {
    if (entry.opKey === null) continue;
    const opener = open.get(entry.opKey);
    if (opener && OPENERS[opener.kind]!.closers.includes(entry.kind)) open.delete(entry.opKey);
    else if (OPENERS[entry.kind] && !open.has(entry.opKey)) open.set(entry.opKey, entry);
  }
  for (const [key, opener] of open) {
    const rule = OPENERS[opener.kind]!;
    const closer = (await readAfter(atSeq)).find((entry) => entry.seq > atSeq && entry.opKey === key && rule.closers.includes(entry.kind));
    const instead = closer ? `at seq ${opener.seq - 1} or earlier, or at seq ${closer.seq} or later` : `at seq ${opener.seq - 1} or earlier`;
    throw new ValidationError(
      `fork: atSeq ${atSeq} cuts "${key}" of run "${runId}" between its ${opener.kind} (seq ${opener.seq}) and its outcome: ${rule.why}. Fork ${instead}.`,
    );
  }
}
