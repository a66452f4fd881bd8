import { RunNotFoundError } from "../../core/errors.js";
import type { NewEntry } from "../../core/journal.js";
import type { RunRecord, RunStatus } from "../../core/run.js";
import type { ClaimRequest, LeaseStore, RenewRequest } from "../../core/store.js";
import { ATTEMPT_PEEK, attemptPeekSettles, recoveryVerdict } from "../common/recovery.js";
import { claimRun, fenceOut, type RunState } from "../common/run-state.js";
import type { SqliteConnection } from "./sqlite-connection.js";
import { GET_RECOVERY_FAILURES, LATEST_ATTEMPT, SET_RECOVERY_FAILURES, claimParams, claimProbeParams } from "./sqlite-leases-queries.js";
import { stateParams, toEntry, toState, type EntryRow, type StateRow } from "./sqlite-rows.js";
import type { SqliteWriter } from "./sqlite-write.js";

/** The {@link LeaseStore} part of {@link SqliteStore}: claiming runs, renewing and fencing out leases. */
export class SqliteLeases implements LeaseStore {
  constructor(
    private readonly c: SqliteConnection,
    private readonly w: SqliteWriter,
  ) {}

  /** See {@link Store.claimRuns}. */
  async claimRuns(request: ClaimRequest): Promise<RunRecord[]> {
    if (request.limit < 1 || request.workflows.length === 0) return [];
    // An idle worker polls often: look first with a plain read (WAL readers take no lock), and
    // open a write transaction only when there is something to claim.
    const queued = request.queues !== undefined && request.queues.length > 0;
    const found = (this.c.q.claimProbe(request.workflows.length).get(...claimProbeParams(request)) as { found: number }).found === 1;
    if (!found && !(queued && this.c.flow.anyDue(request))) return [];
    return this.c.immediate(() => {
      const found = this.c.q.claim(request.workflows.length).all(...claimParams(request)) as (StateRow & { claimKey: number })[];
      const unqueued = found.map(({ claimKey: _, ...row }) => row);
      const candidates = queued ? [...unqueued, ...this.c.flow.pick(request, request.limit - unqueued.length)] : unqueued;
      // Runs re-claimed after an abnormal end may go to the dead-letter state instead (see common/recovery.ts).
      const rows = candidates.filter((row) => {
        if (request.maxRecoveryAttempts === undefined || row.status !== "running") return true;
        return !this.deadOnRecovery(toState(row), request.maxRecoveryAttempts, request.now);
      });
      return rows.flatMap((row) => {
        const claimed = claimRun(toState(row), request);
        this.c.q.updateState.run(stateParams(claimed.run));
        this.w.insertEntries([claimed.entry]);
        return [this.w.mustLoadRun(row.runId)];
      });
    });
  }

  /** The dead-letter check of a run re-claimed after an abnormal end (see common/recovery.ts); true when it is now dead. */
  private deadOnRecovery(run: RunState, max: number, now: number): boolean {
    const q = this.c.q;
    const read = (limit: number) => (q.prepared(LATEST_ATTEMPT).all({ id: run.runId, limit }) as EntryRow[]).map(toEntry);
    let attempt = read(ATTEMPT_PEEK);
    if (!attemptPeekSettles(attempt)) attempt = read(-1);
    const stored = q.prepared(GET_RECOVERY_FAILURES).get(run.runId) as { n: number };
    const verdict = recoveryVerdict(run, attempt, stored.n, max, now);
    q.prepared(SET_RECOVERY_FAILURES).run(verdict.failures, run.runId);
    if (!verdict.dead) return false;
    q.updateState.run(stateParams(verdict.dead.run));
    this.w.insertEntries([verdict.dead.entry]);
    q.closeHumans.run("dead", now, verdict.dead.run.runId);
    return true;
  }

  /** See {@link Store.renewLeases}. */
  async renewLeases(request: RenewRequest): Promise<string[]> {
    if (request.leases.length === 0) return [];
    return this.c.immediate(() =>
      request.leases.flatMap((lease) => {
        const renewed = this.c.q.renewLease.run(request.now + request.leaseMs, lease.runId, lease.epoch, request.workerId).changes > 0;
        return renewed ? [] : [lease.runId];
      }),
    );
  }

  /** See {@link Store.controlRun}. */
  async controlRun(runId: string, allowed: readonly RunStatus[], entry: NewEntry, now: number): Promise<{ run: RunRecord; applied: boolean }> {
    return this.c.immediate(() => {
      const run = this.w.loadState(runId);
      if (!run) throw new RunNotFoundError(runId);
      if (!allowed.includes(run.status)) return { run: this.w.mustLoadRun(runId), applied: false };
      const fenced = fenceOut(run);
      this.w.applyEntries(fenced, fenced.leaseEpoch, [entry], now, run);
      return { run: this.w.mustLoadRun(runId), applied: true };
    });
  }
}
