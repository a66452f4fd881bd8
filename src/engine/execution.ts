import { LeaseLostError, isCairnError, type NonDeterminismError } from "../core/errors.js";
import type { JournalEntry, NewEntry, OpKind, WaitDescriptor } from "../core/journal.js";
import type { RunRecord } from "../core/run.js";
import { resumeView } from "../core/resume.js";
import { decode, serializeError } from "../core/serialize.js";
import { takeMatching } from "./event-match.js";
import type { ExecutionHost } from "./execution-host.js";
import { drained, isDraining, isSettled, type Phase } from "./execution-phase.js";
import type { Outcome, StepHistory } from "./execution-types.js";
import { workflowContext, type ContextParts } from "./ops/context.js";
import { Loops } from "./ops/loop.js";
import { rootScope, type Scope } from "./replay/op-keys.js";
import { ReplayCore } from "./replay/replay-core.js";
import { Waits } from "./waits.js";
import { RunEnd, type EndingExecution, type ExecutionEnd } from "./run-end.js";
import { isSagaKind, Saga } from "./saga.js";
import type { ResumedAs } from "./ops/op-scheduler.js";
import { resumedAs } from "./ops/resume-approval.js";
import type { Workflow, WorkflowContext } from "./workflow.js";

export type { ExecutionEnd } from "./run-end.js";

/**
 * One worker's execution of one run: replays the journal through the workflow
 * function, then runs new ops live, until the run completes, fails, suspends,
 * or the lease is lost. It schedules; the ops are in engine/ops/, the replay rules
 * in engine/replay/, and how the run ends in engine/run-end.ts.
 *
 * Outcomes reach workflow code one at a time, in journal order, each followed by a
 * full drain of the microtask queue — live and on replay alike — so that
 * `Promise.all`/`Promise.race` observe the same order after a crash.
 */
export class Execution implements EndingExecution {
  readonly runId: string;
  readonly epoch: number;
  /** Resolves once the execution has ended; never rejects. */
  readonly done: Promise<ExecutionEnd>;
  /** Once ended `completed` by its workflow: the payload of the `run.completed` entry it wrote. */
  completedPayload: string | undefined;
  /** The run's compensations and resources (engine/saga.ts). */
  readonly saga = new Saga();
  /** How this execution took the run (a step's fresh approval reads it: engine/ops/resume-approval.ts). */
  resumedAs: ResumedAs = { recovered: false, sleptMs: 0 };
  /** The journal, the outcomes due and the ops issued: the rules shared with a dry replay. */
  readonly replay: ReplayCore;
  /** Where the execution is in its life (engine/execution-phase.ts). */
  phase: Phase = "running";

  private readonly root: Scope = rootScope();
  private readonly waits: Waits;
  private readonly loops = new Loops(this, (key) => this.waits.forget(key));
  private readonly ending = new RunEnd(this);
  /** New ops issued while journaled outcomes are still due: launched once replay catches up. */
  private readonly deferred: (() => void)[] = [];
  private readonly reservedInbox = new Set<number>();
  /** Made when something asks for {@link signal} (most runs never do: an AbortController and its abort event cost more than a step). */
  private abortController: AbortController | undefined;
  private aborted: { reason: unknown } | undefined;
  private readonly abortListeners = new Set<(reason: unknown) => void>();
  private replayRemaining = 0;
  private inflight = 0;
  private readonly idleWaiters: (() => void)[] = [];
  private pumping = false;
  private checkScheduled = false;
  private finish!: (end: ExecutionEnd) => void;
  private readonly ctx: WorkflowContext;
  private readonly contextParts: ContextParts;

  constructor(
    private readonly host: ExecutionHost,
    readonly run: RunRecord,
    readonly workflow: Workflow<any, any>,
    /**
     * Created by this process already claimed by this worker (engine.start with a free local slot),
     * or claimed by it for the first time right after its creation (engine/worker.ts `firstClaim`):
     * its journal is `run.created` and `run.claimed` from pending, which replay and the resume
     * facts ignore, so it starts without reading them back.
     */
    private readonly fresh = false,
  ) {
    this.runId = run.runId;
    this.epoch = run.leaseEpoch;
    this.replay = new ReplayCore(run.runId);
    this.waits = new Waits(
      () => this.host.clock(),
      () => this.recheckWaits(),
    );
    this.done = new Promise((resolve) => (this.finish = resolve));
    this.contextParts = {
      exec: this,
      workflow,
      loops: this.loops,
      ending: this.ending,
      replaying: () => this.replayRemaining > 0,
      root: () => this.ctx,
    };
    this.ctx = this.makeContext(this.root);
  }

  /** Aborted when the execution is abandoned (lease lost, cancelled, hard stop). */
  get signal(): AbortSignal {
    if (!this.abortController) {
      this.abortController = new AbortController();
      if (this.aborted) this.abortController.abort(this.aborted.reason);
    }
    return this.abortController.signal;
  }

  /** Set once the execution is aborted, with the first reason (see {@link abort}). */
  get abortState(): { reason: unknown } | undefined {
    return this.aborted;
  }

  /** Calls `listener` once when the execution is aborted (never if it already was); returns its removal. */
  onAbort(listener: (reason: unknown) => void): () => void {
    if (this.aborted) return () => {};
    this.abortListeners.add(listener);
    return () => this.abortListeners.delete(listener);
  }

  /** Loads the journal and runs the workflow. */
  async start(): Promise<void> {
    try {
      // The store's read skips what checkpoints supersede; the engine narrows it again on the
      // decoded entries, so replay never depends on how a checkpoint was stored.
      this.index(this.fresh ? [] : await resumeView(await this.host.store.readJournalForResume(this.runId)));
    } catch (error) {
      this.host.logger.log("error", "could not load the journal; abandoning the execution", { runId: this.runId, error: serializeError(error) });
      this.abandon(error);
      return;
    }
    Promise.resolve()
      .then(() => this.workflow.run(this.ctx, decode(this.run.input)))
      .then(
        (output) => this.ending.onWorkflowSettled({ ok: true, value: output }),
        (error) => this.ending.onWorkflowSettled({ ok: false, error }),
      );
    void this.pump();
  }

  /** Stop making progress; journal in-flight outcomes, then give the lease back. */
  drain(): void {
    this.phase = drained(this.phase);
    this.scheduleCheck();
  }

  /** Abandon at once: abort running steps, write nothing more. */
  abandon(reason?: unknown): void {
    if (this.phase === "ended") return;
    this.phase = "ended";
    this.waits.stop();
    this.abort(reason ?? new LeaseLostError(this.runId, this.epoch));
    this.finish("abandoned");
  }

  private index(entries: JournalEntry[]): void {
    this.resumedAs = resumedAs(entries);
    const saga = this.saga;
    this.replayRemaining = this.replay.load(entries, {
      entry: (raw) => saga.index(raw),
      stepCompleted: (key, data) => saga.noteCompleted(key, data),
    });
  }

  // ── issuing ops ──────────────────────────────────────────────────────────

  /** Issues an op: its key. Throws on a bad name, and on a divergence (failing the run). */
  issue(scope: Scope, name: unknown, kind: OpKind): string {
    if (isSettled(this.phase)) throw new LeaseLostError(this.runId, this.epoch);
    return this.replay.issue(scope, name, kind, (error) => this.failNonDeterminism(error));
  }

  /** Registers the op's promise; starts it now, defers it until replay catches up, or waits for its journaled outcome. */
  awaitOp<T>(key: string, start: () => Promise<void>): Promise<T> {
    return this.registerOp<T>(
      key,
      (launch) => this.waits.remember(key, launch),
      () => {
        // A run being cancelled or compensated replays up to here, then unwinds instead of going on.
        if (this.saga.halted) {
          this.scheduleCheck();
          return;
        }
        this.inflight += 1;
        start()
          .catch((error) => this.onInternalError(key, error))
          .finally(() => this.settleInFlight());
      },
    );
  }

  /**
   * The part every op shares: its promise (resolved in journal order by {@link pump}); if the journal
   * holds its outcome, that is delivered and `run` never happens; a new op issued while journaled
   * outcomes are still undelivered runs only once replay proves the code still matches the journal.
   */
  registerOp<T>(key: string, remember: (launch: () => void) => void, run: () => void): Promise<T> {
    const promise = this.replay.wait<T>(key);
    if (this.replay.deliveries.has(key)) {
      if (this.replay.deliveries.next()?.opKey === key) void this.pump();
      return promise;
    }
    const launch = () => {
      if (this.phase !== "ended") run();
    };
    remember(launch);
    if (this.replayRemaining > 0 && !this.replay.journal.has(key)) {
      this.deferred.push(launch);
      this.scheduleCheck();
    } else {
      launch();
    }
    return promise;
  }

  /** Runs work that keeps the run from suspending or ending until it settles. */
  async inFlight<T>(work: () => Promise<T>): Promise<T> {
    this.inflight += 1;
    try {
      return await work();
    } finally {
      this.settleInFlight();
    }
  }

  private settleInFlight(): void {
    this.inflight -= 1;
    if (this.inflight === 0) for (const idle of this.idleWaiters.splice(0)) idle();
    this.scheduleCheck();
  }

  /** A promise resolved once no op is in flight, or null when none is now. */
  whenIdle(): Promise<void> | null {
    return this.inflight > 0 ? new Promise<void>((resolve) => this.idleWaiters.push(resolve)) : null;
  }

  // ── delivering outcomes ──────────────────────────────────────────────────

  /**
   * Journals an outcome and hands it to workflow code in the same step, in journal order.
   * The commit that carries it also carries whatever the workflow code issues next in this
   * tick — typically the next step's intent — so a sequential step costs one commit. Nothing
   * with an effect waits less: a step's function runs only once its intent (and so this
   * outcome, committed with or before it) is durable, and the run completes, suspends or
   * consumes events only through later commits. If the commit fails, the execution is abandoned.
   * (Its commit may still be in flight as it is delivered: docs/decisions/0004.)
   */
  commitOutcome(key: string, entries: NewEntry[], outcome: Outcome, onDurable?: () => void): void {
    this.write(entries).then(
      () => onDurable?.(),
      (error: unknown) => this.onInternalError(key, error),
    );
    this.replay.deliveries.push({ seq: 0, opKey: key, outcome });
    void this.pump();
  }

  private async pump(): Promise<void> {
    if (this.pumping || this.phase === "ended") return;
    this.pumping = true;
    try {
      while (!this.isEnded && !this.isDraining) {
        const next = this.replay.deliverNext();
        if (!next) break;
        this.waits.unblock(next.opKey);
        if (this.replayRemaining > 0) this.replayRemaining -= 1;
        // Let workflow code run to its next await before the next outcome, as it did live.
        await new Promise<void>((resolve) => setImmediate(resolve));
        if (this.replayRemaining === 0 && this.deferred.length > 0) {
          for (const launch of this.deferred.splice(0)) launch();
        }
      }
    } finally {
      this.pumping = false;
    }
    this.scheduleCheck();
  }

  // ── quiescence: suspend, release, or detect divergence ───────────────────

  scheduleCheck(): void {
    if (this.checkScheduled || this.phase === "ended") return;
    this.checkScheduled = true;
    setImmediate(() => {
      this.checkScheduled = false;
      this.checkQuiescent();
    });
  }

  private checkQuiescent(): void {
    if (this.phase !== "running" && this.phase !== "draining") return;
    if (this.inflight > 0 || this.pumping) return;
    if (this.phase === "draining") {
      void this.ending.release();
      return;
    }
    const next = this.replay.deliveries.next();
    if (next) {
      if (this.replay.issued.has(next.opKey)) {
        void this.pump();
        return;
      }
      this.failNonDeterminism(this.replay.unreached(next));
      return;
    }
    if (this.saga.halted) {
      this.ending.unwind();
      return;
    }
    if (this.waits.any) void this.ending.suspend();
  }

  /** Marks an op as waiting on something outside the worker; {@link recheckWaits} relaunches it. */
  block(descriptor: WaitDescriptor): void {
    this.waits.block(descriptor);
  }

  /** The waits of the ops blocked now. */
  blockedWaits(): WaitDescriptor[] {
    return this.waits.list();
  }

  /**
   * Something may have arrived (an event, a child's result, an answer, a due time):
   * relaunch blocked ops so they look again. Ops whose wait is still open block again.
   */
  recheckWaits(): void {
    if (this.phase === "running") this.waits.relaunch();
  }

  /** True when some op waits for something other than time. */
  get waitsOnOthers(): boolean {
    return this.waits.onOthers;
  }

  /** The oldest unconsumed inbox event of this type that no other wait in this execution has taken. */
  async takeEvent(type: string, match?: Record<string, unknown>): Promise<{ id: number; eventId: string; payload: string } | undefined> {
    if (match) return takeMatching(this.host.store, this.runId, type, match, this.reservedInbox);
    const events = await this.host.store.pendingEvents(this.runId, type, 16);
    const event = events.find((e) => !this.reservedInbox.has(e.id));
    if (event) this.reservedInbox.add(event.id);
    return event;
  }

  // ── failing and ending ───────────────────────────────────────────────────

  /** Fails the run: its code no longer matches its journal (engine/run-end.ts). */
  failNonDeterminism(error: NonDeterminismError): void {
    this.ending.failNonDeterminism(error);
  }

  /** An engine error while running an op: abandons the execution. */
  onInternalError(key: string, error: unknown): void {
    if (this.phase === "ended") return;
    if (isCairnError(error, "LEASE_LOST")) {
      this.abandon(error);
      return;
    }
    this.host.logger.log("error", "engine error while running an op; abandoning the execution", {
      runId: this.runId,
      opKey: key,
      error: serializeError(error),
    });
    this.abandon(error);
  }

  /** Aborts running steps' signals (the first reason stays, as an AbortSignal's does). */
  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = { reason };
    this.abortController?.abort(reason);
    const listeners = [...this.abortListeners];
    this.abortListeners.clear();
    for (const listener of listeners) listener(reason);
  }

  /** The execution is over: nothing more is written. See {@link EndingExecution.end}. */
  end(end: ExecutionEnd, completed?: string): void {
    if (this.phase === "ended") return;
    this.phase = "ended";
    this.completedPayload = completed;
    this.waits.stop();
    this.finish(end);
  }

  // ── writes ───────────────────────────────────────────────────────────────

  /** Appends entries durably; throws LeaseLostError (and abandons) if the lease is gone. */
  async write(entries: NewEntry[]): Promise<number> {
    if (this.phase === "ended") throw new LeaseLostError(this.runId, this.epoch);
    const committed = this.loops.running ? this.loops.watchForeign(entries) : null;
    let result: Awaited<ReturnType<ExecutionHost["commit"]>>;
    try {
      result = await this.host.commit({ runId: this.runId, epoch: this.epoch, entries });
    } finally {
      committed?.();
    }
    if (!result.ok) {
      const error = new LeaseLostError(this.runId, this.epoch);
      this.abandon(error);
      throw error;
    }
    // Keep the per-op history current, so an op relaunched after a wait sees what it wrote.
    entries.forEach((entry, i) => {
      if (entry.opKey === null) return;
      const seq = result.firstSeq + i;
      if (this.loops.running) this.loops.noteForeign(entry as NewEntry & { opKey: string }, seq);
      if (isSagaKind(entry.kind)) return;
      // An op of a loop iteration that has ended is forgotten: its late-committing outcome is not kept.
      if (!this.replay.issued.has(entry.opKey)) return;
      this.replay.journal.noteWritten(entry as NewEntry & { opKey: string }, seq);
    });
    return result.lastSeq;
  }

  /** Appends entries; false (having abandoned the execution unless the lease was lost) when that failed. */
  async tryWrite(entries: NewEntry[]): Promise<boolean> {
    try {
      await this.write(entries);
      return true;
    } catch (error) {
      if (!isCairnError(error, "LEASE_LOST")) {
        this.host.logger.log("error", "write failed; abandoning the execution", { runId: this.runId, error: serializeError(error) });
        this.abandon(error);
      }
      return false;
    }
  }

  // ── the context ──────────────────────────────────────────────────────────

  /** The workflow context of a scope (the workflow's, or a loop iteration's): each op from engine/ops/. */
  makeContext(scope: Scope): WorkflowContext {
    return workflowContext(this.contextParts, scope);
  }

  // ── accessors for the op runners ─────────────────────────────────────────

  /** What the journal holds for a step key. */
  stepHistory(key: string): StepHistory {
    return { entries: this.replay.journal.entries(key), retried: this.replay.journal.wasRetried(key) };
  }

  get hostRef(): ExecutionHost {
    return this.host;
  }

  get isSettled(): boolean {
    return isSettled(this.phase);
  }

  get isDraining(): boolean {
    return isDraining(this.phase);
  }

  get isEnded(): boolean {
    return this.phase === "ended";
  }
}
