import { isCairnError, ValidationError, type NonDeterminismError, type RunCancelledError } from "../core/errors.js";
import { newEntry, type EntryData, type NewEntry, type WaitDescriptor } from "../core/journal.js";
import { serializeError, type SerializedError } from "../core/serialize.js";
import { crashPoint } from "./crash-points.js";
import type { Outcome } from "./execution-types.js";
import { cleaningUp, isCleaningUp, isSettled, settled, type Phase } from "./execution-phase.js";
import { journaledValue } from "./journaled-value.js";
import { continueEntry, journalable } from "./live-ops.js";
import type { OpScheduler } from "./ops/op-scheduler.js";
import { cancelCause, compensationFailure } from "./saga.js";
import type { SagaReason } from "./saga.js";
import type { Workflow } from "./workflow.js";

/** How an execution ended. */
export type ExecutionEnd = "completed" | "failed" | "suspended" | "released" | "abandoned";

/** How a run that uses sagas or resources is to end (see RunEnd.finishSaga). */
type SagaEnd = { kind: "completed"; entry: NewEntry } | { kind: "failed"; reason: SagaReason; error: SerializedError; cancelReason?: string };

/** What ending a run needs from its execution. */
export interface EndingExecution extends OpScheduler {
  readonly workflow: Workflow<any, any>;
  /** Where the execution is in its life (engine/execution-phase.ts). */
  phase: Phase;
  /** The waits of the ops blocked now. */
  blockedWaits(): WaitDescriptor[];
  /** A promise resolved once no op is in flight, or null when none is now (so the caller goes on in the same tick). */
  whenIdle(): Promise<void> | null;
  /** Aborts running steps' signals. */
  abort(reason: unknown): void;
  /** Appends entries; false (having abandoned the execution if needed) when that failed. */
  tryWrite(entries: NewEntry[]): Promise<boolean>;
  /**
   * The execution is over: nothing more is written. `completed`: the payload of the `run.completed`
   * entry it wrote, which `result()` waiters in this process read instead of the store.
   */
  end(end: ExecutionEnd, completed?: string): void;
  /** Abandons at once (a lost lease). */
  abandon(reason?: unknown): void;
}

const noop = () => {};

/**
 * How a run's execution ends: completing, failing, cancelling itself, continuing as new, unwinding its
 * saga, suspending until something arrives, or giving the lease back on a drain. Each writes one
 * terminal (or suspending) entry, after any compensations and releases, each journaled.
 */
export class RunEnd {
  constructor(private readonly exec: EndingExecution) {}

  /** The workflow function returned or threw. */
  async onWorkflowSettled(result: Outcome): Promise<void> {
    const exec = this.exec;
    if (isSettled(exec.phase)) return;
    if (!result.ok && isCairnError(result.error, "NON_DETERMINISM")) {
      this.failNonDeterminism(result.error as NonDeterminismError);
      return;
    }
    if (!result.ok && isCairnError(result.error, "LEASE_LOST")) {
      exec.abandon(result.error);
      return;
    }
    exec.phase = settled(exec.phase);
    // Outcomes of ops still in flight (a race's loser) are fine; journaled ops the code never reached are not,
    // unless the code stopped with a Cairn error of its own (e.g. a refused manifest): that says more.
    const missing = exec.replay.unissuedAtEnd(!result.ok && isCairnError(result.error));
    if (missing) {
      await this.failWithoutCompensating(missing);
      return;
    }
    if (exec.saga.halted || exec.saga.used) {
      await this.finishSaga(this.sagaEnd(result));
      return;
    }
    exec.abort(new Error("workflow finished"));
    crashPoint("before-complete");
    if (result.ok) {
      let entry: NewEntry;
      try {
        entry = journaledValue(
          "run.completed",
          null,
          { output: result.value },
          (copy) => copy.output,
          exec.hostRef.maxPayloadBytes,
          "The workflow's output",
        ).entry;
      } catch (error) {
        await this.writeFailure(error);
        return;
      }
      const ok = await exec.tryWrite([entry]);
      if (ok) exec.end("completed", entry.payload);
    } else {
      await this.writeFailure(result.error);
    }
  }

  /** Fails the run: its code no longer matches its journal. */
  failNonDeterminism(error: NonDeterminismError): void {
    const exec = this.exec;
    if (isSettled(exec.phase)) return;
    exec.phase = settled(exec.phase);
    exec.abort(error);
    void this.failWithoutCompensating(error);
  }

  /** A run being cancelled or compensated has replayed up to where it stopped: unwind. */
  unwind(): void {
    this.exec.phase = settled(this.exec.phase);
    void this.finishSaga(this.haltedEnd());
  }

  /** Nothing more can happen until something arrives: write `run.suspended` and end. */
  async suspend(): Promise<void> {
    const exec = this.exec;
    exec.phase = settled(exec.phase);
    const waitingFor = exec.blockedWaits();
    let wakeAt: number | null = null;
    for (const wait of waitingFor) {
      const at = "wakeAt" in wait ? wait.wakeAt : "timeoutAt" in wait ? wait.timeoutAt : null;
      if (at !== null && (wakeAt === null || at < wakeAt)) wakeAt = at;
    }
    crashPoint("before-suspend");
    const ok = await exec.tryWrite([newEntry("run.suspended", null, { wakeAt, waitingFor })]);
    crashPoint("after-suspend");
    if (!ok) return;
    if (wakeAt !== null) exec.hostRef.scheduleWake(wakeAt);
    exec.end("suspended");
  }

  /** Drained with nothing in flight: give the lease back. */
  async release(): Promise<void> {
    const exec = this.exec;
    exec.phase = settled(exec.phase);
    const ok = await exec.tryWrite([newEntry("run.released", null, { workerId: exec.hostRef.workerId, stopped: true })]);
    if (ok) exec.end("released");
  }

  /** `ctx.compensate()`: unwinds the saga and ends the run; workflow code never resumes after it. */
  requestCompensation(reason: unknown): Promise<never> {
    if (reason !== undefined && typeof reason !== "string") throw new ValidationError("ctx.compensate(reason): reason must be a string.");
    const exec = this.exec;
    if (!isSettled(exec.phase)) {
      exec.phase = settled(exec.phase);
      const error: SerializedError = { name: "CompensationRequested", message: reason ?? "The workflow called ctx.compensate()." };
      void this.finishSaga({ kind: "failed", reason: "requested", error });
    }
    return new Promise<never>(noop);
  }

  /** `ctx.continueAsNew`: one commit ends this run and creates the next (engine/live-ops.ts). */
  continueAsNew(input: unknown): Promise<never> {
    const exec = this.exec;
    if (exec.saga.used) throw new ValidationError("ctx.continueAsNew cannot end a run that registered compensations or holds resources.");
    const copy = journalable(input, exec.hostRef.maxPayloadBytes, "ctx.continueAsNew: the input");
    if (!isSettled(exec.phase)) {
      exec.phase = settled(exec.phase);
      exec.abort(new Error("workflow continued as new"));
      void (async () => {
        const entry = continueEntry(exec.run, exec.workflow, copy, await exec.hostRef.store.getRunTags(exec.runId), exec.hostRef.maxPayloadBytes);
        crashPoint("before-continue");
        const ok = await exec.tryWrite([entry]);
        crashPoint("after-continue");
        if (ok) {
          exec.hostRef.kick();
          exec.end("completed");
        }
      })().catch((error: unknown) => exec.onInternalError("continueAsNew", error));
    }
    return new Promise<never>(noop);
  }

  /** How a run being cancelled or compensated ends, as its journal says. */
  private haltedEnd(): SagaEnd {
    const saga = this.exec.saga;
    const unwinding = saga.unwinding;
    if (unwinding) return { kind: "failed", reason: unwinding.reason, error: unwinding.error };
    const reason = saga.cancelling?.reason;
    return { kind: "failed", reason: "cancelled", error: cancelCause(reason), ...(reason === undefined ? {} : { cancelReason: reason }) };
  }

  /** How a run that uses sagas or resources ends once its workflow function settled. */
  private sagaEnd(result: Outcome): SagaEnd {
    const exec = this.exec;
    if (exec.saga.halted) return this.haltedEnd();
    if (!result.ok) {
      const error = result.error;
      if (isCairnError(error, "RUN_CANCELLED") && (error as RunCancelledError).runId === exec.runId) {
        const reason = (error as RunCancelledError).reason;
        return { kind: "failed", reason: "cancelled", error: cancelCause(reason), ...(reason === undefined ? {} : { cancelReason: reason }) };
      }
      return { kind: "failed", reason: "failed", error: serializeError(error) };
    }
    try {
      const { entry } = journaledValue(
        "run.completed",
        null,
        { output: result.value },
        (copy) => copy.output,
        exec.hostRef.maxPayloadBytes,
        "The workflow's output",
      );
      return { kind: "completed", entry };
    } catch (error) {
      return { kind: "failed", reason: "failed", error: serializeError(error) };
    }
  }

  /**
   * Ends a run that uses sagas or resources: waits for the ops still in flight (a step completing
   * now still registers its compensation), compensates in reverse order if the run did not
   * complete, releases every resource still held, then writes the terminal entry. Every action is
   * journaled intent-then-outcome, so a crash anywhere here resumes where it stopped.
   */
  private async finishSaga(end: SagaEnd): Promise<void> {
    const exec = this.exec;
    if (isCleaningUp(exec.phase)) return;
    exec.phase = cleaningUp(exec.phase);
    const idle = exec.whenIdle();
    if (idle) await idle;
    try {
      const saga = exec.saga;
      if (end.kind === "failed") saga.noteInterrupted(this.interruptedCompensable());
      let unwinding = saga.unwinding;
      if (!unwinding && end.kind === "failed" && (saga.hasCompensations || end.reason === "requested")) {
        unwinding = { reason: end.reason, error: end.error };
        await exec.write([newEntry("saga.compensating", null, unwinding)]);
        saga.unwinding = unwinding;
      }
      let terminal: NewEntry;
      if (unwinding) {
        const result = await saga.compensate(exec);
        terminal = result.ok
          ? newEntry("run.compensated", null, { error: unwinding.error })
          : newEntry("run.compensation_failed", null, { error: compensationFailure(result.key, result.error, result.attempts), cause: unwinding.error });
      } else if (end.kind === "completed") {
        terminal = end.entry;
      } else if (end.reason === "cancelled") {
        terminal = newEntry("run.cancelled", null, end.cancelReason === undefined ? {} : { reason: end.cancelReason });
      } else {
        terminal = newEntry("run.failed", null, { error: end.error });
      }
      await this.releaseHeld();
      crashPoint("before-saga-end");
      exec.abort(new Error("workflow finished"));
      const ok = await exec.tryWrite([terminal]);
      if (ok && terminal.kind === "run.completed") exec.end("completed", terminal.payload);
      else if (ok) exec.end("failed");
    } catch (error) {
      exec.onInternalError("saga", error);
    }
  }

  /** Steps with a compensate whose last journaled entry is an intent: cut off mid-flight (by a cancel's fence), in intent order. */
  private interruptedCompensable(): string[] {
    const found: { key: string; seq: number }[] = [];
    for (const [key, entries] of this.exec.replay.journal) {
      const last = entries.at(-1);
      if (last?.kind === "step.started" && (last.data as EntryData["step.started"]).compensable) found.push({ key, seq: last.seq });
    }
    return found.sort((a, b) => a.seq - b.seq).map((f) => f.key);
  }

  /**
   * Fails a run whose code no longer matches its journal. No compensation runs (the run can be retried
   * once the right code is deployed, and undoing its work would make that pointless), but resources are
   * still given back: those whose release function the replayed code registered again are released,
   * journaled like any release; the others are journaled as `resource.release_failed` (see Saga.releaseAll).
   */
  private async failWithoutCompensating(error: unknown): Promise<void> {
    const exec = this.exec;
    if (exec.saga.used) {
      if (isCleaningUp(exec.phase)) return;
      exec.phase = cleaningUp(exec.phase);
      // A step still running may complete now and register a resource: wait for it (its signal was aborted).
      const idle = exec.whenIdle();
      if (idle) await idle;
      try {
        await this.releaseHeld();
      } catch (caught) {
        exec.onInternalError("saga", caught);
        return;
      }
      crashPoint("before-saga-end");
    }
    await this.writeFailure(error);
  }

  /** Releases every resource still held; a failure is journaled by the saga and logged here, never fatal. */
  private releaseHeld(): Promise<void> {
    const exec = this.exec;
    return exec.saga.releaseAll(exec, (key, error) =>
      exec.hostRef.logger.log("error", "a resource could not be released; the run ends anyway", { runId: exec.runId, opKey: key, error }),
    );
  }

  private async writeFailure(error: unknown): Promise<void> {
    const exec = this.exec;
    // The run cancelled itself (a question for a person timed out with onTimeout "cancel").
    if (isCairnError(error, "RUN_CANCELLED") && (error as RunCancelledError).runId === exec.runId) {
      const ok = await exec.tryWrite([newEntry("run.cancelled", null, { reason: (error as RunCancelledError).reason })]);
      if (ok) exec.end("failed");
      return;
    }
    const serialized: SerializedError = serializeError(error);
    const ok = await exec.tryWrite([newEntry("run.failed", null, { error: serialized })]);
    if (ok) exec.end("failed");
  }
}
