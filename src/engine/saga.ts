import { newEntry, type EntryData, type EntryKind, type JournalEntry, type NewEntry } from "../core/journal.js";
import { decode, serializeError, type SerializedError } from "../core/serialize.js";
import { crashPoint } from "./crash-points.js";
import { backoffDelay, isNonRetryable, type ResolvedRetryPolicy } from "./retry-policy.js";
import type { ReconcileResult, StepEffect } from "./workflow.js";

/** Why a saga unwinds (journaled in `saga.compensating`). */
export type SagaReason = EntryData["saga.compensating"]["reason"];

/** Who runs a cleanup action (journaled on releases). */
type By = "workflow" | "engine" | "resume";

/** The two kinds of cleanup action: undoing a step, releasing a resource. */
type Family = "compensation" | "resource";

/** A cleanup function registered by workflow code (re-registered on every replay). */
export interface Cleanup {
  fn: (value: any, info: { idempotencyKey: string; attempt: number }) => Promise<void> | void;
  policy: ResolvedRetryPolicy;
  /** The step's effect class and reconcile: what an interrupted step's compensation is told (see Saga.noteInterrupted). */
  effect?: StepEffect;
  reconcile?: (idempotencyKey: string) => Promise<ReconcileResult<unknown>> | ReconcileResult<unknown>;
}

/** A completed step whose result must be compensated or released, in registration (journal) order. */
interface Registration {
  key: string;
  value: unknown;
}

/** What the journal says about one cleanup action. */
interface ActionState {
  attempt: number;
  /** Attempts before the last `run.retried` do not count against the retry budget. */
  base: number;
  done: boolean;
  final: SerializedError | null;
}

/** What the saga needs from the execution. */
export interface SagaExecution {
  readonly runId: string;
  readonly isEnded: boolean;
  write(entries: NewEntry[]): Promise<number>;
}

/** The result of running one cleanup action to its end. */
export type ActionResult = { ok: true } | { ok: false; error: SerializedError; attempts: number };

const SAGA_KINDS = new Set<EntryKind>([
  "run.cancelling",
  "saga.compensating",
  "compensation.started",
  "compensation.completed",
  "compensation.failed",
  "resource.releasing",
  "resource.released",
  "resource.release_failed",
]);

/** Entries the saga keeps to itself: they are not part of any op's history (replay never delivers them). */
export function isSagaKind(kind: EntryKind): boolean {
  return SAGA_KINDS.has(kind);
}

/**
 * One run's saga: the compensations its completed steps registered, the resources it holds, and
 * what the journal says each cleanup action did. Built from the journal on resume, kept current live.
 * The cleanup functions themselves are closures of workflow code, re-registered as replay re-issues
 * the steps; replay never calls them for an action whose outcome is journaled.
 */
export class Saga {
  private readonly compensations: Registration[] = [];
  /** Steps with a compensate whose intent has no outcome when the run unwinds, in intent order. */
  private readonly interrupted: string[] = [];
  private readonly resources: Registration[] = [];
  private readonly compensators = new Map<string, Cleanup>();
  /** Seqs of loop iterations' registrations and cleanup entries: loop checkpoints keep them (engine/ops/loop.ts). */
  private readonly kept: { key: string; seq: number }[] = [];
  /** Resources a resume released (`by: "resume"`) and not acquired again since. */
  private readonly releasedOnResume = new Set<string>();
  private readonly releasers = new Map<string, Cleanup>();
  private readonly actions = new Map<string, ActionState>();
  private readonly inFlight = new Map<string, Promise<ActionResult>>();
  /** Journaled `saga.compensating`: the saga is unwinding (or was asked to). */
  unwinding: EntryData["saga.compensating"] | null = null;
  /** Journaled `run.cancelling`: an operator cancelled the run; its cleanup is still to run. */
  cancelling: EntryData["run.cancelling"] | null = null;
  /** The journal held saga entries, or workflow code registered a cleanup: the run uses the feature. */
  private seen = false;

  /** True when replay must not start new ops: the run is being cancelled or compensated. */
  get halted(): boolean {
    return this.unwinding !== null || this.cancelling !== null;
  }

  /** True when the run uses compensations or resources, so its end must wait for in-flight ops and clean up. */
  get used(): boolean {
    return this.seen || this.compensators.size > 0 || this.releasers.size > 0 || this.compensations.length > 0 || this.resources.length > 0;
  }

  /** True when something must be undone if the run does not complete. */
  get hasCompensations(): boolean {
    return this.compensations.length > 0 || this.interrupted.length > 0 || this.unwinding !== null;
  }

  /** Reads one journal entry on resume; true when it is a saga entry that belongs to no op. */
  index(raw: JournalEntry): boolean {
    if (raw.kind === "run.retried") {
      for (const state of this.actions.values()) {
        if (state.final === null) continue;
        state.final = null;
        state.base = state.attempt;
      }
      return false;
    }
    if (raw.kind === "step.failed" && raw.opKey !== null) this.releasedOnResume.delete(raw.opKey); // a re-acquisition failed
    if (raw.kind === "step.completed") {
      if (raw.opKey?.includes("/") && raw.payload.includes('"compensable"')) this.kept.push({ key: raw.opKey, seq: raw.seq });
      return false;
    }
    if (!SAGA_KINDS.has(raw.kind)) return false;
    this.seen = true;
    const data = decode<any>(raw.payload);
    if (raw.opKey?.includes("/") && raw.kind.startsWith("compensation.")) this.kept.push({ key: raw.opKey, seq: raw.seq });
    switch (raw.kind) {
      case "run.cancelling":
        this.cancelling = data as EntryData["run.cancelling"];
        return true;
      case "saga.compensating":
        this.unwinding = data as EntryData["saga.compensating"];
        return true;
    }
    const family: Family = raw.kind.startsWith("compensation.") ? "compensation" : "resource";
    const state = this.state(family, raw.opKey!);
    switch (raw.kind) {
      case "compensation.started":
      case "resource.releasing":
        state.attempt = (data as { attempt: number }).attempt;
        break;
      case "compensation.completed":
      case "resource.released":
        state.done = true;
        if ((data as { by?: string }).by === "resume") this.releasedOnResume.add(raw.opKey!);
        break;
      case "compensation.failed":
      case "resource.release_failed": {
        const failed = data as EntryData["compensation.failed"];
        state.attempt = failed.attempt;
        if (failed.final) state.final = failed.error;
        break;
      }
    }
    return true;
  }

  /** A journaled or live `step.completed`: registers its compensation or resource, if it has one. */
  noteCompleted(key: string, data: EntryData["step.completed"]): void {
    if (data.compensable && !this.compensations.some((r) => r.key === key)) this.compensations.push({ key, value: data.result });
    if (data.resource) {
      // A resource acquired again after a resume released it: a new generation under the same key.
      const previous = this.resources.findIndex((r) => r.key === key);
      if (previous >= 0) this.resources.splice(previous, 1);
      this.actions.delete(`resource ${key}`);
      this.releasedOnResume.delete(key);
      this.resources.push({ key, value: data.result });
    }
  }

  /**
   * Steps with a `compensate` whose intent is journaled without an outcome as the run unwinds (a cancel
   * fenced them out mid-flight): their effect may have happened, so they are compensated too, before
   * the completed ones. Their compensation gets what the step's `reconcile` finds (nothing to undo
   * when it reports not done), else `undefined`; a step with `effect: "none"` is not compensated.
   */
  noteInterrupted(keys: readonly string[]): void {
    for (const key of keys) {
      if (!this.interrupted.includes(key) && !this.compensations.some((r) => r.key === key)) this.interrupted.push(key);
    }
  }

  /** Workflow code issued a step with a `compensate` (again on every replay). */
  setCompensator(key: string, cleanup: Cleanup): void {
    this.compensators.set(key, cleanup);
  }

  /**
   * True when a step of a loop's iterations (under `prefix`) registered a compensation: the loop
   * then stops checkpointing, so that a resume replays those iterations and their code registers
   * the compensate functions again (closures of that code, e.g. over a tool call's arguments).
   */
  hasCompensationsUnder(prefix: string): boolean {
    return this.compensations.some((r) => r.key.startsWith(prefix));
  }

  /** Seqs of loop iterations' compensable outcomes and compensation entries read on this resume (loop checkpoints keep them). */
  keptEntries(): readonly { key: string; seq: number }[] {
    return this.kept;
  }

  /**
   * What a resume must do for a resource a loop iteration acquired under `key` in an earlier
   * execution: `"held"`, release it and acquire it again; `"released"`, a resume released it and
   * crashed before acquiring it again: acquire it again; null, nothing (never acquired, or released
   * by the workflow or at its iteration's end: replay returns the journaled value).
   */
  staleResource(key: string): "held" | "released" | null {
    if (this.releasedOnResume.has(key)) return "released";
    const held = this.resources.some((r) => r.key === key) && !this.isReleased(key);
    return held ? "held" : null;
  }

  /** Releases, on resume, a resource an earlier execution held (journaled `by: "resume"`). */
  releaseStale(execution: SagaExecution, key: string): Promise<ActionResult> {
    const registration = this.resources.find((r) => r.key === key);
    const cleanup = this.releasers.get(key);
    if (!registration || !cleanup) return Promise.resolve({ ok: true });
    return this.run(execution, "resource", registration, cleanup, "resume");
  }

  /** Releases the resources still held under a loop iteration's prefix, newest first (the iteration ended). */
  async releaseUnder(execution: SagaExecution, prefix: string, onFailure: (key: string, error: SerializedError) => void): Promise<void> {
    for (const registration of [...this.resources].reverse()) {
      if (!registration.key.startsWith(prefix) || this.isReleased(registration.key)) continue;
      const cleanup = this.releasers.get(registration.key);
      if (!cleanup) continue;
      const result = await this.run(execution, "resource", registration, cleanup, "engine");
      if (!result.ok) onFailure(registration.key, result.error);
    }
  }

  /** True when a resource registration under this loop iteration prefix is still held. */
  holdsUnder(prefix: string): boolean {
    return this.resources.some((r) => r.key.startsWith(prefix) && !this.isReleased(r.key));
  }

  /** Workflow code issued `ctx.acquire` (again on every replay). */
  setReleaser(key: string, cleanup: Cleanup): void {
    this.releasers.set(key, cleanup);
  }

  /** What a step's outcome carries so that the saga registers it on replay; null for a step that registers nothing. */
  flagsFor(key: string): { compensable?: true; resource?: true } | null {
    if (this.compensators.size > 0 && this.compensators.has(key)) return { compensable: true };
    if (this.releasers.size > 0 && this.releasers.has(key)) return { resource: true };
    return null;
  }

  isReleased(key: string): boolean {
    return this.actions.get(`resource ${key}`)?.done === true;
  }

  /** Runs the registered compensations, newest first; stops at the first that fails for good. */
  async compensate(execution: SagaExecution): Promise<{ ok: true } | { ok: false; key: string; error: SerializedError; attempts: number }> {
    const order = [
      ...this.compensations.map((registration) => ({ registration, interrupted: false })),
      ...this.interrupted.map((key) => ({ registration: { key, value: undefined } as Registration, interrupted: true })),
    ].reverse();
    for (const { registration: given, interrupted } of order) {
      const cleanup = this.compensators.get(given.key);
      let registration: Registration | null = given;
      if (cleanup && interrupted) registration = await this.whatHappened(execution, given.key, cleanup);
      if (!registration) continue;
      const result = cleanup
        ? await this.run(execution, "compensation", registration, cleanup, "engine")
        : missingCleanup(registration.key, this.actions.get(`compensation ${registration.key}`));
      if (!result.ok) return { ...result, key: registration.key };
    }
    return { ok: true };
  }

  /** What to undo for a step interrupted mid-flight; null when nothing happened (per its reconcile or its effect class). */
  private async whatHappened(execution: SagaExecution, key: string, cleanup: Cleanup): Promise<Registration | null> {
    const state = this.actions.get(`compensation ${key}`);
    if (state?.done) return { key, value: undefined }; // journaled as done: never run again
    // A compensation already started (before a crash) is carried to its end.
    const underWay = (state?.attempt ?? 0) > 0;
    if (cleanup.effect === "none" && !underWay) return null;
    if (!cleanup.reconcile) return { key, value: undefined };
    let verdict: ReconcileResult<unknown>;
    try {
      verdict = await cleanup.reconcile(`${execution.runId}:${key}`);
    } catch {
      return { key, value: undefined }; // unknown: it may have happened
    }
    if (verdict.done) return { key, value: verdict.value };
    return underWay ? { key, value: undefined } : null;
  }

  /**
   * Releases every resource still held, newest first. Failures are journaled and logged, not fatal.
   * A resource whose release function the replayed code did not register again (the code changed)
   * cannot be released: that is journaled once as a final `resource.release_failed`, so the leak shows.
   */
  async releaseAll(execution: SagaExecution, onFailure: (key: string, error: SerializedError) => void): Promise<void> {
    for (const registration of [...this.resources].reverse()) {
      if (this.isReleased(registration.key)) continue;
      const cleanup = this.releasers.get(registration.key);
      const result = cleanup ? await this.run(execution, "resource", registration, cleanup, "engine") : await this.notReleasable(execution, registration.key);
      if (!result.ok) onFailure(registration.key, result.error);
    }
  }

  /** Journals (once) that a held resource has no release function to call. */
  private async notReleasable(execution: SagaExecution, key: string): Promise<ActionResult> {
    const state = this.state("resource", key);
    if (state.final) return { ok: false, error: state.final, attempts: state.attempt - state.base };
    const error: SerializedError = {
      name: "ResourceNotReleasedError",
      message:
        `Resource "${key}" is still held and was not released: the workflow code did not issue ctx.acquire for it again on replay, ` +
        `so there is no release function to call. Release it by hand, or deploy code that issues it and retry the run.`,
      opKey: key,
    };
    await execution.write([newEntry("resource.release_failed", key, { attempt: state.attempt, error, final: true, by: "engine" })]);
    state.final = error;
    return { ok: false, error, attempts: 0 };
  }

  /** The workflow's `handle.release()`: the same journaled action the engine would run; a no-op once released. */
  release(execution: SagaExecution, key: string): Promise<ActionResult> {
    const registration = this.resources.find((r) => r.key === key);
    const cleanup = this.releasers.get(key);
    if (!registration || !cleanup) return Promise.resolve({ ok: true });
    return this.run(execution, "resource", registration, cleanup, "workflow");
  }

  private state(family: Family, key: string): ActionState {
    const id = `${family} ${key}`;
    let state = this.actions.get(id);
    if (!state) this.actions.set(id, (state = { attempt: 0, base: 0, done: false, final: null }));
    return state;
  }

  /** One action at a time per key: a release racing the engine's joins it. */
  private run(execution: SagaExecution, family: Family, registration: Registration, cleanup: Cleanup, by: By): Promise<ActionResult> {
    const id = `${family} ${registration.key}`;
    const running = this.inFlight.get(id);
    if (running) return running;
    const promise = this.attempts(execution, family, registration, cleanup, by).finally(() => this.inFlight.delete(id));
    this.inFlight.set(id, promise);
    return promise;
  }

  /**
   * Attempts one action until it succeeds or its retries run out. Intent before, outcome after:
   * an intent without an outcome (a crash mid-action) is attempted again with the same idempotency key.
   */
  private async attempts(execution: SagaExecution, family: Family, registration: Registration, cleanup: Cleanup, by: By): Promise<ActionResult> {
    const { key } = registration;
    const state = this.state(family, key);
    if (state.done) return { ok: true };
    if (state.final) return { ok: false, error: state.final, attempts: state.attempt - state.base };
    const idempotencyKey = `${execution.runId}:${key}:${family === "compensation" ? "compensate" : "release"}`;
    const point = family === "compensation" ? "compensation" : "release";
    for (;;) {
      state.attempt += 1;
      const attempt = state.attempt;
      await execution.write([
        family === "compensation" ? newEntry("compensation.started", key, { attempt }) : newEntry("resource.releasing", key, { attempt, by }),
      ]);
      crashPoint(`after-${point}-intent`, key);
      let error: unknown;
      let ok = true;
      try {
        await cleanup.fn(registration.value, { idempotencyKey, attempt });
      } catch (caught) {
        ok = false;
        error = caught;
      }
      crashPoint(`after-${point}-effect`, key);
      if (ok) {
        await execution.write([
          family === "compensation" ? newEntry("compensation.completed", key, { attempt }) : newEntry("resource.released", key, { attempt, by }),
        ]);
        state.done = true;
        crashPoint(`after-${point}-outcome`, key);
        return { ok: true };
      }
      const serialized = serializeError(error);
      serialized.opKey = key;
      const used = attempt - state.base;
      const final = isNonRetryable(error, cleanup.policy) || used >= cleanup.policy.maxAttempts;
      await execution.write([
        family === "compensation"
          ? newEntry("compensation.failed", key, { attempt, error: serialized, final })
          : newEntry("resource.release_failed", key, { attempt, error: serialized, final, by }),
      ]);
      if (final) {
        state.final = serialized;
        return { ok: false, error: serialized, attempts: used };
      }
      await pause(execution, backoffDelay(cleanup.policy, used));
    }
  }
}

/** A registration whose cleanup function the replayed code never re-registered (the code changed): fail, loudly. */
function missingCleanup(key: string, state: ActionState | undefined): ActionResult {
  if (state?.done) return { ok: true };
  return {
    ok: false,
    attempts: 0,
    error: {
      name: "CompensationMissingError",
      message: `Step "${key}" registered a cleanup, but the workflow code did not issue it again with its compensate/release function on replay.`,
      opKey: key,
    },
  };
}

/** Waits between attempts, in process (cleanup runs at the end of a run, under its lease). */
function pause(execution: SagaExecution, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    if (execution.isEnded) {
      clearTimeout(timer);
      resolve();
    }
  });
}

/**
 * True when cancelling a run needs a worker: its journal registered compensations, holds a
 * resource not yet released, or is already unwinding. Read by `engine.cancel`.
 */
export function needsCleanup(entries: readonly JournalEntry[]): boolean {
  const held = new Set<string>();
  const inFlight = new Set<string>();
  for (const entry of entries) {
    if (entry.kind === "saga.compensating") return true;
    // A compensable step's intent without an outcome: its effect may have happened (see Saga.noteInterrupted).
    if (entry.kind === "step.started" && entry.payload.includes('"compensable"') && decode<EntryData["step.started"]>(entry.payload).compensable) {
      inFlight.add(entry.opKey!);
    }
    if (entry.kind === "step.failed") inFlight.delete(entry.opKey!);
    if (entry.kind === "step.completed") {
      inFlight.delete(entry.opKey!);
      const data = decode<EntryData["step.completed"]>(entry.payload);
      if (data.compensable) return true;
      if (data.resource) held.add(entry.opKey!);
    }
    if (entry.kind === "resource.released") held.delete(entry.opKey!);
  }
  return held.size > 0 || inFlight.size > 0;
}

/** The error a run ends with when a compensation failed for good: it names the compensation. */
export function compensationFailure(key: string, error: SerializedError, attempts: number): SerializedError {
  return {
    name: "CompensationFailedError",
    message: `Compensation of step "${key}" failed after ${attempts} attempt${attempts === 1 ? "" : "s"}: ${error.name}: ${error.message}`,
    code: "COMPENSATION_FAILED",
    opKey: key,
    data: { opKey: key, attempts, error },
  };
}

/** The cause journaled when an operator cancel unwinds the saga. */
export function cancelCause(reason: string | undefined): SerializedError {
  return { name: "CancelledError", message: reason ? `Cancelled: ${reason}` : "Cancelled", code: "RUN_CANCELLED", data: { reason } };
}
