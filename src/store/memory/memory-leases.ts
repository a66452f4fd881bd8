import { RunNotFoundError } from "../../core/errors.js";
import type { NewEntry } from "../../core/journal.js";
import { isTerminal, type RunRecord, type RunStatus } from "../../core/run.js";
import type { ClaimRequest, LeaseStore, RenewRequest } from "../../core/store.js";
import { compareText } from "../common/list-query.js";
import { recoveryVerdict } from "../common/recovery.js";
import { claimKey, claimRun, fenceOut, isClaimable } from "../common/run-state.js";
import type { MemoryWriter } from "./memory-write.js";

/** The {@link LeaseStore} part of {@link MemoryStore}: claiming runs, renewing and fencing out leases. */
export class MemoryLeases implements LeaseStore {
  /** Abnormal ends counted per run by the dead-letter check (the SQL stores' `recovery_failures` column). */
  private readonly recoveryFailures = new Map<string, number>();

  constructor(private readonly w: MemoryWriter) {}

  /** See {@link Store.claimRuns}. */
  async claimRuns(request: ClaimRequest): Promise<RunRecord[]> {
    if (request.limit < 1 || request.workflows.length === 0) return [];
    const { t, flow } = this.w;
    return t.atomic(() => {
      const all = [...t.runs.values()];
      const due = all.filter((run) => isClaimable(run, request) && !flow.waitsForSlot(run));
      due.sort((a, b) => claimKey(a) - claimKey(b) || compareText(a.runId, b.runId));
      const candidates = due.slice(0, request.limit);
      if (request.queues && request.queues.length > 0) candidates.push(...flow.pick(all, request, request.limit - candidates.length));
      const taken: RunRecord[] = [];
      for (const run of candidates) {
        if (run.status === "running" && request.maxRecoveryAttempts !== undefined) {
          const journal = t.journal.get(run.runId) ?? [];
          const from = journal.findLastIndex((entry) => entry.kind === "run.claimed");
          const verdict = recoveryVerdict(
            run,
            journal.slice(Math.max(0, from)),
            this.recoveryFailures.get(run.runId) ?? 0,
            request.maxRecoveryAttempts,
            request.now,
          );
          this.recoveryFailures.set(run.runId, verdict.failures);
          if (verdict.dead) {
            t.putRun({ ...run, ...verdict.dead.run });
            t.append([verdict.dead.entry]);
            this.w.closeHumans(run.runId, "dead", request.now);
            continue;
          }
        }
        taken.push(run);
      }
      return taken.flatMap((run) => {
        const claimed = claimRun(run, request);
        t.putRun(claimed.run);
        t.append([claimed.entry]);
        return [{ ...claimed.run }];
      });
    });
  }

  /** See {@link Store.renewLeases}. */
  async renewLeases(request: RenewRequest): Promise<string[]> {
    const lost: string[] = [];
    for (const lease of request.leases) {
      const run = this.w.t.runs.get(lease.runId);
      if (!run || run.leaseEpoch !== lease.epoch || run.leaseOwner !== request.workerId || isTerminal(run.status)) {
        lost.push(lease.runId);
        continue;
      }
      this.w.t.putRun({ ...run, leaseExpiresAt: request.now + request.leaseMs });
    }
    return lost;
  }

  /** See {@link Store.controlRun}. */
  async controlRun(runId: string, allowed: readonly RunStatus[], entry: NewEntry, now: number): Promise<{ run: RunRecord; applied: boolean }> {
    return this.w.t.atomic(() => {
      const run = this.w.t.runs.get(runId);
      if (!run) throw new RunNotFoundError(runId);
      if (!allowed.includes(run.status)) return { run: { ...run }, applied: false };
      const fenced = fenceOut(run);
      this.w.applyEntries(fenced, fenced.leaseEpoch, [entry], now);
      return { run: { ...this.w.mustGet(runId) }, applied: true };
    });
  }
}
