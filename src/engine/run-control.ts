import { randomUUID } from "node:crypto";
import {
  CairnError,
  CompensationFailedError,
  RunCancelledError,
  RunCompensatedError,
  RunConflictError,
  RunFailedError,
  RunFinishedError,
  RunNotFailedError,
} from "../core/errors.js";
import { forkBody } from "../core/api-schemas.js";
import { newEntry, type EntryData } from "../core/journal.js";
import { FAILED_STATUSES, LIVE_STATUSES, type RunRecord } from "../core/run.js";
import { cancelReasonSchema, runIdRefSchema as RUN_REF } from "../core/schemas.js";
import { decode, encode, type SerializedError } from "../core/serialize.js";
import type { CopiedEntry, Store } from "../core/store.js";
import { check } from "./check-input.js";
import type { RunInfo } from "./engine.js";
import { planFork, type ForkOptions } from "./fork.js";
import { followChain } from "./live-ops.js";
import { needsCleanup } from "./saga.js";
import { requireRun, type RunViews } from "./run-views.js";
import type { WorkerPool } from "./worker-pool.js";
import type { WorkflowRegistry } from "./workflow-registry.js";

/** What operator actions on runs need from the engine. */
export interface RunControlDeps {
  store: Pick<Store, "getRun" | "readJournal" | "controlRun" | "listRuns" | "createRunWithJournal" | "readCompaction">;
  clock: () => number;
  pool: WorkerPool;
  views: RunViews;
  workflows: WorkflowRegistry;
  maxPayloadBytes: number;
  /** The engine's `cancel` (children are cancelled through it). */
  cancel(runId: string, reason: string): Promise<unknown>;
}

/** Operator actions on runs, outside any lease: cancel, retry, fork; and waiting for a run's result. */
export class RunControl {
  constructor(private readonly deps: RunControlDeps) {}

  async cancel(runId: string, reason?: string): Promise<RunInfo> {
    const { store, clock, pool } = this.deps;
    check(RUN_REF, runId, "cancel: runId");
    const data = reason === undefined ? {} : { reason: check(cancelReasonSchema, reason, "cancel: reason") };
    // A run with compensations to run or resources to release is handed back to a worker to clean up (engine/saga.ts).
    const before = await store.readJournal(runId);
    const cleanup = needsCleanup(before);
    const control = await store.controlRun(runId, LIVE_STATUSES, newEntry(cleanup ? "run.cancelling" : "run.cancelled", null, data), clock());
    if (!control.applied) throw new RunFinishedError(runId, control.run.status, "cancel");
    let run = control.run;
    if (!cleanup && needsCleanup(await store.readJournal(runId, { afterSeq: before.at(-1)?.seq ?? 0 }))) {
      // The run registered a cleanup between the read and the cancel (the cancel fenced it out): reopen it to clean up.
      ({ run } = await store.controlRun(runId, ["cancelled"], newEntry("run.cancelling", null, data), clock()));
    }
    pool.abandon(runId, new RunCancelledError(runId, reason));
    await this.cancelChildren(runId, reason);
    if (run.status === "pending") pool.kick();
    else pool.ended(runId);
    return this.deps.views.view(run);
  }

  private async cancelChildren(runId: string, reason: string | undefined): Promise<void> {
    let cursor: string | undefined;
    do {
      const page = await this.deps.store.listRuns({ parentRunId: runId, status: [...LIVE_STATUSES], limit: 1000, cursor });
      for (const child of page.runs) {
        await this.deps.cancel(child.runId, reason ?? `parent ${runId} cancelled`).catch((error) => {
          if (!(error instanceof RunFinishedError)) throw error;
        });
      }
      cursor = page.nextCursor;
    } while (cursor);
  }

  async retry(runId: string): Promise<RunInfo> {
    const { store, clock } = this.deps;
    check(RUN_REF, runId, "retry: runId");
    const journal = await store.readJournal(runId);
    const failedSteps = [...new Set(journal.filter((e) => e.kind === "step.failed" && decode<{ final: boolean }>(e.payload).final).map((e) => e.opKey!))];
    // A compensation_failed run retries its failed compensation (and then the older ones), not its steps;
    // a dead run is claimed again with its recovery counter reset.
    const { run, applied } = await store.controlRun(runId, FAILED_STATUSES, newEntry("run.retried", null, { failedSteps }), clock());
    if (!applied) throw new RunNotFailedError(runId, run.status);
    this.deps.pool.kick();
    return this.deps.views.view(run);
  }

  /** Forks a run at a seq; resolves with the fork's id and whether this call created it. */
  async fork(runId: string, options: ForkOptions): Promise<{ runId: string; created: boolean }> {
    const { store, clock } = this.deps;
    check(RUN_REF, runId, "fork: runId");
    const parsed = check(forkBody, options, "fork: options");
    const source = await requireRun(store, runId);
    // A compacted journal has gaps: the entries up to atSeq are at most atSeq of them.
    const journal = (await store.readJournal(runId, { limit: parsed.atSeq })).filter((entry) => entry.seq <= parsed.atSeq);
    // Read after the journal: a compaction that removed any of these entries has its marker by now.
    const compaction = journal.length < parsed.atSeq ? await store.readCompaction(runId) : undefined;
    const patch = parsed.patch ? { seq: parsed.patch.seq, result: parsed.patch.result ?? null } : undefined;
    const readAfter = (seq: number) => store.readJournal(runId, { afterSeq: seq });
    // The fork continues under current code: the version this engine runs for the workflow now.
    const version = this.deps.workflows.currentVersion(source.workflow) ?? source.version;
    const plan = await planFork(
      source,
      journal,
      readAfter,
      { atSeq: parsed.atSeq, version, ...(patch ? { patch } : {}), ...(compaction ? { compaction } : {}) },
      clock(),
      this.deps.maxPayloadBytes,
    );
    const forkId = parsed.runId ?? randomUUID();
    const newRun = { runId: forkId, workflow: source.workflow, version, input: source.input };
    const { run, created } = await store.createRunWithJournal(newRun, plan.copies, clock(), plan.compaction);
    if (!created) await this.checkSameFork(run, plan.forked, plan.copies);
    else this.deps.pool.kick();
    return { runId: forkId, created };
  }

  /** A fork with a taken runId is the same fork (a retried request) only if it forked the same run at the same place. */
  private async checkSameFork(run: RunRecord, forked: EntryData["run.forked"], copies: readonly CopiedEntry[]): Promise<void> {
    const { store } = this.deps;
    const [marker] = await store.readJournal(run.runId, { afterSeq: forked.atSeq, limit: 1 });
    const same = marker?.kind === "run.forked" && marker.payload === encode(forked);
    const patched = forked.patchedSeq === undefined ? undefined : copies.find((copy) => copy.seq === forked.patchedSeq)?.payload;
    const samePatch = patched === undefined || (await store.readJournal(run.runId, { afterSeq: forked.patchedSeq! - 1, limit: 1 }))[0]?.payload === patched;
    if (!same || !samePatch) throw new RunConflictError(run.runId, `and is not this fork of "${forked.fromRunId}" at seq ${forked.atSeq}`);
  }

  /** Waits for a run (and the runs it continued as) to finish: its output, or its failure as an error. */
  async result<O>(runId: string, options: { timeoutMs?: number }): Promise<O> {
    check(RUN_REF, runId, "result: runId");
    const deadline = options.timeoutMs === undefined ? Infinity : Date.now() + options.timeoutMs;
    // Executing here, so not finished: the first look waits for its end (any end is announced) instead
    // of reading the row; after 5 s without one it polls the row as below.
    if (this.deps.pool.holds(runId)) {
      const completed = await this.deps.pool.waitForChange(runId, Math.max(0, Math.min(deadline - Date.now(), 5_000)));
      if (completed !== undefined) return outputOf<O>(completed);
    }
    for (;;) {
      let run = await requireRun(this.deps.store, runId);
      // A run that continued as new: the result is its chain's last run's.
      if (run.status === "completed") run = await followChain(this.deps.store, run);
      if (run.status === "completed") return decode<O>(run.output);
      if (run.status === "failed" || run.status === "dead") throw new RunFailedError(runId, decode<SerializedError>(run.error));
      if (run.status === "cancelled") throw new RunCancelledError(runId, (decode<SerializedError>(run.error)?.data as { reason?: string } | undefined)?.reason);
      if (run.status === "compensated") throw new RunCompensatedError(runId, decode<SerializedError>(run.error) ?? { name: "Error", message: "compensated" });
      if (run.status === "compensation_failed") {
        throw new CompensationFailedError(runId, decode<SerializedError>(run.error) ?? { name: "Error", message: "compensation failed" });
      }
      const left = deadline - Date.now();
      if (left <= 0) throw new CairnError("TIMEOUT", `Run "${runId}" is still ${run.status} after ${options.timeoutMs}ms.`);
      // Completed by an execution in this process: its output is the run.completed entry's, committed.
      const completed = await this.deps.pool.waitForChange(run.runId, Math.min(left, 100));
      if (completed !== undefined) return outputOf<O>(completed);
    }
  }
}

/** The output a `run.completed` payload carries (an execution of this process committed it). */
function outputOf<O>(completed: string): O {
  return decode<EntryData["run.completed"]>(completed).output as O;
}
