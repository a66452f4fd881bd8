import type { QueueLimits } from "../flow-control.js";
import type { NewEntry } from "../journal.js";
import type { RunRecord, RunStatus } from "../run.js";

/** Leases: claiming runnable runs, renewing leases, and operator actions that fence the holder out. Part of the {@link Store} port. */
export interface LeaseStore {
  /**
   * Claims up to `limit` runnable runs of the given workflow versions: pending runs,
   * suspended runs whose `wakeAt <= now`, and running runs whose lease expired.
   * Each claimed run gets `leaseEpoch + 1`, the lease, status `running`,
   * `wakePending = false` and a `run.claimed` entry. Oldest wake-up first.
   */
  claimRuns(request: ClaimRequest): Promise<RunRecord[]>;
  /** Extends the leases still held (matching epoch, not terminal); returns the runIds whose lease is lost. */
  renewLeases(request: RenewRequest): Promise<string[]>;
  /**
   * Operator action outside any lease (cancel, retry): if the run's status is in
   * `allowed`, bumps its epoch (fencing out the current holder), clears the lease,
   * appends `entry` and projects it. Returns the updated row, or the unchanged row and
   * `applied: false` when its status is not allowed. Throws RunNotFoundError for unknown runs.
   */
  controlRun(runId: string, allowed: readonly RunStatus[], entry: NewEntry, now: number): Promise<{ run: RunRecord; applied: boolean }>;
}

/** What a worker may claim. */
export interface ClaimRequest {
  workerId: string;
  now: number;
  leaseMs: number;
  limit: number;
  /** Only runs pinned to one of these (workflow, version) pairs are claimed. */
  workflows: { name: string; version: string }[];
  /**
   * Queues whose runs this claim may take, with their limits (flow control). Runs of other queues are
   * not claimed (except running ones whose lease expired, which keep their slot). A queued run is
   * claimed, after the unqueued ones, only while its queue has fewer than `concurrency` runs running,
   * its key fewer than `perKeyConcurrency`, and (for a first start) the rate limit allows; highest
   * priority first, then oldest wake-up. Absent or empty: no queued run is claimed and no extra work is done.
   */
  queues?: QueueLimits[];
  /**
   * Dead-letter limit: a run re-claimed after this many consecutive attempts without progress
   * (see `store/common/recovery.ts`) is moved to `dead` with a `run.dead` entry instead of being
   * claimed. Unset: never. Only runs whose lease expired or was given back are checked.
   */
  maxRecoveryAttempts?: number;
}
/** Leases to extend. */
export interface RenewRequest {
  workerId: string;
  leases: { runId: string; epoch: number }[];
  now: number;
  leaseMs: number;
}
