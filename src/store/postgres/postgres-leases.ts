import { RunNotFoundError } from "../../core/errors.js";
import type { NewEntry } from "../../core/journal.js";
import type { RunRecord, RunStatus } from "../../core/run.js";
import type { ClaimRequest, LeaseStore, RenewRequest } from "../../core/store.js";
import { ATTEMPT_PEEK, attemptPeekSettles, recoveryVerdict } from "../common/recovery.js";
import { claimRun, fenceOut, type RunState } from "../common/run-state.js";
import type { PostgresConnection } from "./postgres-connection.js";
import { pickQueuedRuns } from "./postgres-flow.js";
import { CLOSE_HUMANS } from "./postgres-human-requests-queries.js";
import { INSERT_ENTRIES } from "./postgres-journal-queries.js";
import { CLAIM_CANDIDATES, CLAIM_PROBE, GET_RECOVERY_FAILURES, LATEST_ATTEMPT, RENEW_LEASES, SET_RECOVERY_FAILURES } from "./postgres-leases-queries.js";
import { entryArrays, stateArrays, toEntry, toRun, toState, type EntryRow, type StateRow } from "./postgres-rows.js";
import { mustGetRun } from "./postgres-runs.js";
import { UPDATE_STATES, UPDATE_STATES_RETURNING } from "./postgres-runs-queries.js";
import type { Tx } from "./postgres-tx.js";
import { WriteSession } from "./postgres-write.js";

/** The {@link LeaseStore} part of {@link PostgresStore}: claiming runs, renewing and fencing out leases. */
export class PostgresLeases implements LeaseStore {
  constructor(private readonly db: PostgresConnection) {}

  /** See {@link Store.claimRuns}. In database-clock mode `request.now` is ignored. */
  async claimRuns(request: ClaimRequest): Promise<RunRecord[]> {
    if (request.limit < 1 || request.workflows.length === 0) return [];
    const names = request.workflows.map((w) => w.name);
    const versions = request.workflows.map((w) => w.version);
    // Queued runs are picked in the transaction (their limits are counted there); otherwise look first.
    if (!request.queues || request.queues.length === 0) {
      const [probe] = await this.db.query<{ found: boolean }>(CLAIM_PROBE, [names, versions, this.db.runner.nowParam(request.now)]);
      if (!probe?.found) return [];
    }
    return this.db.tx(request.now, async (tx) => {
      const found = await tx.query<StateRow & { claim_key: number }>(CLAIM_CANDIDATES, [names, versions, request.limit, tx.now]);
      const timed = { ...request, now: tx.now };
      const rows = found.map(({ claim_key: _, ...row }) => row);
      let states = rows.map((row) => toState(row));
      if (request.queues && request.queues.length > 0)
        states.push(...(await pickQueuedRuns(tx, timed, request.limit - states.length)).map((row) => toState(row)));
      // Runs re-claimed after an abnormal end may go to the dead-letter state instead (see common/recovery.ts).
      if (request.maxRecoveryAttempts !== undefined && states.some((state) => state.status === "running")) {
        states = await this.checkRecoveries(tx, states, request.maxRecoveryAttempts, tx.now);
      }
      if (states.length === 0) return [];
      const claimed = states.map((state) => claimRun(state, timed));
      const updated = await tx.query<StateRow & { input: string }>(UPDATE_STATES_RETURNING, stateArrays(claimed.map((c) => c.run)));
      await tx.query(INSERT_ENTRIES, entryArrays(claimed.map((c) => c.entry)));
      tx.journaled(claimed.map((c) => c.run.runId));
      const byId = new Map(updated.map((row) => [row.runId, toRun(row)]));
      return claimed.flatMap((c) => byId.get(c.run.runId) ?? []);
    });
  }

  /**
   * The dead-letter check of runs re-claimed after an abnormal end (see common/recovery.ts): writes
   * the dead ones' `run.dead` entries and returns the runs still to claim. Rows are locked by the claim.
   */
  private async checkRecoveries(tx: Tx, states: RunState[], max: number, now: number): Promise<RunState[]> {
    const keep: RunState[] = [];
    for (const state of states) {
      if (state.status !== "running") {
        keep.push(state);
        continue;
      }
      let attempt = (await tx.query<EntryRow>(LATEST_ATTEMPT, [state.runId, ATTEMPT_PEEK])).map(toEntry);
      if (!attemptPeekSettles(attempt)) attempt = (await tx.query<EntryRow>(LATEST_ATTEMPT, [state.runId, null])).map(toEntry);
      const [stored] = await tx.query<{ n: number }>(GET_RECOVERY_FAILURES, [state.runId]);
      const verdict = recoveryVerdict(state, attempt, Number(stored?.n ?? 0), max, now);
      await tx.query(SET_RECOVERY_FAILURES, [state.runId, verdict.failures]);
      if (!verdict.dead) {
        keep.push(state);
        continue;
      }
      await tx.query(UPDATE_STATES, stateArrays([verdict.dead.run]));
      await tx.query(INSERT_ENTRIES, entryArrays([verdict.dead.entry]));
      await tx.query(CLOSE_HUMANS, [[state.runId], ["dead"], now]);
      tx.journaled([state.runId]);
    }
    return keep;
  }

  /** See {@link Store.renewLeases}. In database-clock mode `request.now` is ignored. */
  async renewLeases(request: RenewRequest): Promise<string[]> {
    if (request.leases.length === 0) return [];
    const rows = await this.db.query<{ runId: string; leaseEpoch: number }>(RENEW_LEASES, [
      request.workerId,
      request.leases.map((lease) => lease.runId),
      request.leases.map((lease) => lease.epoch),
      this.db.runner.nowParam(request.now),
      request.leaseMs,
    ]);
    const renewed = new Set(rows.map((row) => `${row.leaseEpoch}:${row.runId}`));
    return request.leases.filter((lease) => !renewed.has(`${lease.epoch}:${lease.runId}`)).map((lease) => lease.runId);
  }

  /** See {@link Store.controlRun}. */
  async controlRun(runId: string, allowed: readonly RunStatus[], entry: NewEntry, now: number): Promise<{ run: RunRecord; applied: boolean }> {
    return this.db.tx(now, async (tx) => {
      const session = new WriteSession(tx);
      await session.lock([runId]);
      const run = session.state(runId);
      if (!run) throw new RunNotFoundError(runId);
      if (!allowed.includes(run.status)) return { run: await mustGetRun(tx, runId), applied: false };
      const fenced = fenceOut(run);
      await session.append(fenced, fenced.leaseEpoch, [entry]);
      await session.flush();
      return { run: await mustGetRun(tx, runId), applied: true };
    });
  }
}
