import { RecoveryFailedError } from "../../core/errors.js";
import { newEntry, type EntryData, type JournalEntry } from "../../core/journal.js";
import { encode } from "../../core/serialize.js";
import type { RunState } from "./run-state.js";

/**
 * Dead-letter bookkeeping, shared by every store. It runs only when a worker claims a run whose
 * previous attempt did not end cleanly (status `running`: its lease expired, or the worker gave it
 * back after an engine error) and the claim asks for `maxRecoveryAttempts`: the normal claim and
 * commit paths never come here.
 */

/** Entries a recovery writes by itself, which therefore do not prove progress. */
const NOT_PROGRESS = new Set<string>(["step.started", "step.reconciled", "run.claimed", "run.released"]);

// The payload layer leaves these two kinds plain (PLAIN_ENTRY_KINDS in core/payloads.ts), so they parse here.
function isStoppedRelease(entry: Pick<JournalEntry, "kind" | "payload">): boolean {
  return entry.kind === "run.released" && (JSON.parse(entry.payload) as EntryData["run.released"]).stopped === true;
}

/**
 * Entries of an attempt a store reads first ({@link attemptPeekSettles}): an attempt that made
 * progress shows it within its first few entries, and a long run's attempt may hold millions.
 */
export const ATTEMPT_PEEK = 64;

/**
 * Whether the first {@link ATTEMPT_PEEK} entries of an attempt (or fewer: then the whole attempt)
 * decide the verdict: they are the whole attempt, or one of them is progress (the rest cannot
 * change a verdict of progress). Otherwise the store reads the whole attempt.
 */
export function attemptPeekSettles(peek: readonly Pick<JournalEntry, "kind" | "opKey">[]): boolean {
  return peek.length < ATTEMPT_PEEK || peek.some(isProgress);
}

function isProgress(entry: Pick<JournalEntry, "kind" | "opKey">): boolean {
  return entry.opKey !== null && !NOT_PROGRESS.has(entry.kind);
}

/** What a re-claim of a run whose last attempt ended abnormally decides. */
export interface RecoveryVerdict {
  /** Consecutive attempts without progress, the one that just ended included (0 if it made progress). */
  failures: number;
  /** Set when `failures` reached the limit: the row and `run.dead` entry to write instead of claiming. */
  dead: { run: RunState; entry: JournalEntry } | null;
}

/**
 * Decides whether `run` (status `running`, about to be re-claimed) is claimed again or is dead.
 * `attempt` is the journal from the latest `run.claimed` entry on (the attempt that just ended), or
 * its first {@link ATTEMPT_PEEK} entries when {@link attemptPeekSettles} says they decide;
 * `stored` is the run's `recovery_failures` column. Progress is any entry of an op other than a
 * step intent or a reconciliation (an outcome, a timer or wait armed, a value recorded, a question asked).
 * The counter continues only across attempts that were themselves recoveries (claimed from `running`),
 * so a clean suspension, a retry or a fresh start resets it; so does an attempt its worker gave back
 * while shutting down (`run.released` with `stopped`).
 */
export function recoveryVerdict(
  run: RunState,
  attempt: readonly Pick<JournalEntry, "seq" | "kind" | "opKey" | "payload">[],
  stored: number,
  max: number,
  now: number,
): RecoveryVerdict {
  const claim = attempt[0]?.kind === "run.claimed" ? attempt[0] : undefined;
  const progressed = attempt.some(isProgress);
  // A worker shutting down (a rolling deploy's SIGTERM) gave it back on purpose: no failed recovery.
  if (progressed || attempt.some(isStoppedRelease)) return { failures: 0, dead: null };
  const claimedFrom = claim ? (JSON.parse(claim.payload) as EntryData["run.claimed"]).from : "pending";
  const failures = (claimedFrom === "running" ? stored : 0) + 1;
  if (failures < max) return { failures, dead: null };
  const holder = run.leaseOwner ?? (claim ? (JSON.parse(claim.payload) as EntryData["run.claimed"]).workerId : "unknown");
  const how = run.leaseExpiresAt === null ? `worker ${holder} gave the run back after an error` : `the lease of worker ${holder} expired`;
  const lastFailure = `${how}, at seq ${run.lastSeq}`;
  const error = new RecoveryFailedError(run.runId, failures, lastFailure);
  const data: EntryData["run.dead"] = {
    failures,
    error: { name: error.name, code: error.code, message: error.message, data: { failures, lastFailure, workerId: holder, lastSeq: run.lastSeq } },
  };
  const entry = newEntry("run.dead", null, data);
  const epoch = run.leaseEpoch + 1;
  const seq = run.lastSeq + 1;
  return {
    failures,
    dead: {
      run: {
        ...run,
        status: "dead",
        error: encode(data.error),
        wakeAt: null,
        waitingFor: null,
        wakePending: false,
        leaseOwner: null,
        leaseExpiresAt: null,
        leaseEpoch: epoch,
        lastSeq: seq,
        updatedAt: now,
        finishedAt: now,
      },
      entry: { runId: run.runId, seq, kind: entry.kind, opKey: null, payload: entry.payload, epoch, at: now },
    },
  };
}
