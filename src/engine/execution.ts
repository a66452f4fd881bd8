import { randomUUID } from "node:crypto";
import { toMs, type Duration } from "../core/duration.js";
import {
  LeaseLostError,
  type NonDeterminismError,
  type RunCancelledError,
  StepFailedError,
  TimeoutError,
  ValidationError,
  isCairnError,
} from "../core/errors.js";
import { newEntry, type EntryData, type JournalEntry, type NewEntry, type OpKind, type WaitDescriptor } from "../core/journal.js";
import type { RunRecord } from "../core/run.js";
import { resumeView } from "../core/resume.js";
import { decode, decodeKeepingSecrets, encode, serializeError, type SerializedError } from "../core/serialize.js";
import { checkAskHuman, runAskHuman } from "./ask-human.js";
import { crashPoint } from "./crash-points.js";
import { eventName, type EventDefinition } from "./define-event.js";
import { takeMatching } from "./event-match.js";
import { checkMatch } from "./event-triggers.js";
import { stepFlowLimits } from "../core/step-flow.js";
import { checkEmit, emitEntry, emitMismatch, type EmitOptions, type EmittedMessage } from "./emit.js";
import { checkLiveName, continueEntry, followChain, journalable, publishEntry, replyEntry, serveRequests } from "./live-ops.js";
import type { ExecutionHost } from "./execution-host.js";
import { resolveRetryPolicy } from "./retry-policy.js";
import type { OpExecution, Outcome, StepHistory } from "./execution-types.js";
import { journaledValue } from "./journaled-value.js";
import { ReplayCore } from "./replay/replay-core.js";
import { iterationScope, lastOpKey, rootScope, type Scope } from "./replay/op-keys.js";
import { runStep } from "./step-runner.js";
import { cancelCause, compensationFailure, isSagaKind, Saga, type SagaReason } from "./saga.js";
import {
  LoopDone,
  type AskHumanRequest,
  type ChildOptions,
  type HumanReply,
  type JournalSearchHit,
  type LoopIteration,
  type LoopOptions,
  type ResourceHandle,
  type ResourceOptions,
  type StepOptions,
  type WaitOptions,
  type Workflow,
  type WorkflowContext,
  type WorkflowLogger,
} from "./workflow.js";

/** How a run that uses sagas or resources is to end (see Execution.finishSaga). */
type SagaEnd = { kind: "completed"; entry: NewEntry } | { kind: "failed"; reason: SagaReason; error: SerializedError; cancelReason?: string };

/** How an execution ended. */
export type ExecutionEnd = "completed" | "failed" | "suspended" | "released" | "abandoned";

/** A loop being run: what its checkpoints supersede. */
interface OpenLoop {
  readonly key: string;
  readonly prefix: string;
  /** The seq after its `loop.started`. */
  readonly from: number;
  /** Seqs from `from` on that belong to other ops, which a resume must still read. */
  readonly keep: Set<number>;
  /** Writes with entries of other ops not yet committed: their seqs are not known, so no snapshot now. */
  foreignInFlight: number;
  /** Called when `foreignInFlight` drops to 0. */
  onForeignCommitted: (() => void) | null;
}

const noop = () => {};

/**
 * One worker's execution of one run: replays the journal through the workflow
 * function, then runs new ops live, until the run completes, fails, suspends,
 * or the lease is lost.
 *
 * Outcomes reach workflow code one at a time, in journal order, each followed by a
 * full drain of the microtask queue — live and on replay alike — so that
 * `Promise.all`/`Promise.race` observe the same order after a crash.
 */
export class Execution implements OpExecution {
  readonly runId: string;
  readonly epoch: number;
  /** Resolves once the execution has ended; never rejects. */
  readonly done: Promise<ExecutionEnd>;

  /** The journal, the outcomes due and the ops issued: the rules shared with a dry replay. */
  private readonly replay: ReplayCore;
  private readonly root: Scope = rootScope();
  private readonly openLoops = new Set<OpenLoop>();
  private readonly deferred: (() => void)[] = [];
  private readonly blocked = new Map<string, WaitDescriptor>();
  private readonly launches = new Map<string, () => void>();
  private wakeTimer: NodeJS.Timeout | null = null;
  private readonly reservedInbox = new Set<number>();
  private readonly abortController = new AbortController();
  private replayRemaining = 0;
  private inflight = 0;
  private pumping = false;
  private checkScheduled = false;
  private settled = false;
  private ended = false;
  private draining = false;
  private finish!: (end: ExecutionEnd) => void;
  private readonly ctx: WorkflowContext;
  /** The run's compensations and resources (engine/saga.ts). */
  readonly saga = new Saga();
  /** Set once the run's end (cleanup, then its terminal entry) is under way. */
  private finishing = false;
  private readonly idleWaiters: (() => void)[] = [];

  constructor(
    private readonly host: ExecutionHost,
    private readonly run: RunRecord,
    private readonly workflow: Workflow<any, any>,
  ) {
    this.runId = run.runId;
    this.epoch = run.leaseEpoch;
    this.replay = new ReplayCore(run.runId);
    this.done = new Promise((resolve) => (this.finish = resolve));
    this.ctx = this.makeContext(this.root);
  }

  /** Aborted when the execution is abandoned (lease lost, cancelled, hard stop). */
  get signal(): AbortSignal {
    return this.abortController.signal;
  }

  /** Loads the journal and runs the workflow. */
  async start(): Promise<void> {
    try {
      // The store's read skips what checkpoints supersede; the engine narrows it again on the
      // decoded entries, so replay never depends on how a checkpoint was stored.
      this.index(await resumeView(await this.host.store.readJournalForResume(this.runId)));
    } catch (error) {
      this.host.logger.log("error", "could not load the journal; abandoning the execution", { runId: this.runId, error: serializeError(error) });
      this.abandon(error);
      return;
    }
    Promise.resolve()
      .then(() => this.workflow.run(this.ctx, decode(this.run.input)))
      .then(
        (output) => this.onWorkflowSettled({ ok: true, value: output }),
        (error) => this.onWorkflowSettled({ ok: false, error }),
      );
    void this.pump();
  }

  /** Stop making progress; journal in-flight outcomes, then give the lease back. */
  drain(): void {
    this.draining = true;
    this.scheduleCheck();
  }

  /** Abandon at once: abort running steps, write nothing more. */
  abandon(reason?: unknown): void {
    if (this.ended) return;
    this.ended = true;
    this.settled = true;
    if (this.wakeTimer) clearTimeout(this.wakeTimer);
    this.abortController.abort(reason ?? new LeaseLostError(this.runId, this.epoch));
    this.finish("abandoned");
  }

  // ── journal index ─────────────────────────────────────────────────────────

  private index(entries: JournalEntry[]): void {
    const saga = this.saga;
    this.replayRemaining = this.replay.load(entries, {
      entry: (raw) => saga.index(raw),
      stepCompleted: (key, data) => saga.noteCompleted(key, data),
    });
  }

  // ── issuing ops ──────────────────────────────────────────────────────────

  private issue(scope: Scope, name: unknown, kind: OpKind): string {
    if (this.settled) throw new LeaseLostError(this.runId, this.epoch);
    return this.replay.issue(scope, name, kind, (error) => this.failNonDeterminism(error));
  }

  /** Registers the op's promise; starts it now, defers it until replay catches up, or waits for its journaled outcome. */
  private awaitOp<T>(key: string, start: () => Promise<void>): Promise<T> {
    return this.registerOp<T>(
      key,
      (launch) => this.launches.set(key, launch),
      () => {
        // A run being cancelled or compensated replays up to here, then unwinds instead of going on.
        if (this.saga.halted) {
          this.scheduleCheck();
          return;
        }
        this.inflight += 1;
        start()
          .catch((error) => this.onInternalError(key, error))
          .finally(() => {
            this.inflight -= 1;
            if (this.inflight === 0) for (const idle of this.idleWaiters.splice(0)) idle();
            this.scheduleCheck();
          });
      },
    );
  }

  /**
   * The part every op shares: its promise (resolved in journal order by {@link pump}); if the journal
   * holds its outcome, that is delivered and `run` never happens; a new op issued while journaled
   * outcomes are still undelivered runs only once replay proves the code still matches the journal.
   */
  private registerOp<T>(key: string, remember: (launch: () => void) => void, run: () => void): Promise<T> {
    const promise = this.replay.wait<T>(key);
    if (this.replay.deliveries.has(key)) {
      if (this.replay.deliveries.next()?.opKey === key) void this.pump();
      return promise;
    }
    const launch = () => {
      if (!this.ended) run();
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

  // ── delivering outcomes ──────────────────────────────────────────────────

  /** Queues a live outcome for delivery in journal order (its commit may be in flight: docs/decisions/0004). */
  private deliver(key: string, seq: number, outcome: Outcome): void {
    this.replay.deliveries.push({ seq, opKey: key, outcome });
    void this.pump();
  }

  /**
   * Journals an outcome and hands it to workflow code in the same step, in journal order.
   * The commit that carries it also carries whatever the workflow code issues next in this
   * tick — typically the next step's intent — so a sequential step costs one commit. Nothing
   * with an effect waits less: a step's function runs only once its intent (and so this
   * outcome, committed with or before it) is durable, and the run completes, suspends or
   * consumes events only through later commits. If the commit fails, the execution is abandoned.
   */
  commitOutcome(key: string, entries: NewEntry[], outcome: Outcome, onDurable?: () => void): void {
    this.write(entries).then(
      () => onDurable?.(),
      (error: unknown) => this.onInternalError(key, error),
    );
    this.deliver(key, 0, outcome);
  }

  private async pump(): Promise<void> {
    if (this.pumping || this.ended) return;
    this.pumping = true;
    try {
      while (!this.ended && !this.draining) {
        const next = this.replay.deliverNext();
        if (!next) break;
        this.blocked.delete(next.opKey);
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
    if (this.checkScheduled || this.ended) return;
    this.checkScheduled = true;
    setImmediate(() => {
      this.checkScheduled = false;
      this.checkQuiescent();
    });
  }

  private checkQuiescent(): void {
    if (this.ended || this.settled || this.inflight > 0 || this.pumping) return;
    if (this.draining) {
      void this.release();
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
      this.settled = true;
      void this.finishSaga(this.haltedEnd());
      return;
    }
    if (this.blocked.size > 0) void this.suspend();
  }

  /** Marks an op as waiting on something outside the worker; {@link recheckWaits} relaunches it. */
  block(descriptor: WaitDescriptor): void {
    this.blocked.set(descriptor.opKey, descriptor);
    const at = "wakeAt" in descriptor ? descriptor.wakeAt : "timeoutAt" in descriptor ? descriptor.timeoutAt : null;
    if (at !== null) this.armWakeTimer(at);
  }

  /** While the run is live, a timer that falls due is noticed without waiting for suspension. */
  private armWakeTimer(at: number): void {
    const delay = at - this.host.clock();
    if (delay > 2_147_000_000) return;
    if (this.wakeTimer) clearTimeout(this.wakeTimer);
    this.wakeTimer = setTimeout(
      () => {
        this.wakeTimer = null;
        this.recheckWaits();
      },
      Math.max(0, delay) + 1,
    );
    this.wakeTimer.unref();
  }

  /**
   * Something may have arrived (an event, a child's result, an answer, a due time):
   * relaunch blocked ops so they look again. Ops whose wait is still open block again.
   */
  recheckWaits(): void {
    if (this.ended || this.settled || this.draining) return;
    for (const [key, descriptor] of [...this.blocked]) {
      this.blocked.delete(key);
      const launch = this.launches.get(descriptor.opKey);
      if (launch) launch();
    }
  }

  /** True when some op waits for something other than time. */
  get waitsOnOthers(): boolean {
    for (const descriptor of this.blocked.values()) if (descriptor.kind !== "timer" && descriptor.kind !== "retry") return true;
    return false;
  }

  private async suspend(): Promise<void> {
    this.settled = true;
    const waitingFor = [...this.blocked.values()];
    let wakeAt: number | null = null;
    for (const wait of waitingFor) {
      const at = "wakeAt" in wait ? wait.wakeAt : "timeoutAt" in wait ? wait.timeoutAt : null;
      if (at !== null && (wakeAt === null || at < wakeAt)) wakeAt = at;
    }
    crashPoint("before-suspend");
    const ok = await this.tryWrite([newEntry("run.suspended", null, { wakeAt, waitingFor })]);
    crashPoint("after-suspend");
    if (!ok) return;
    if (wakeAt !== null) this.host.scheduleWake(wakeAt);
    this.end("suspended");
  }

  private async release(): Promise<void> {
    this.settled = true;
    const ok = await this.tryWrite([newEntry("run.released", null, { workerId: this.host.workerId, stopped: true })]);
    if (ok) this.end("released");
  }

  // ── workflow end ─────────────────────────────────────────────────────────

  private async onWorkflowSettled(result: Outcome): Promise<void> {
    if (this.settled) return;
    if (!result.ok && isCairnError(result.error, "NON_DETERMINISM")) {
      this.failNonDeterminism(result.error as NonDeterminismError);
      return;
    }
    if (!result.ok && isCairnError(result.error, "LEASE_LOST")) {
      this.abandon(result.error);
      return;
    }
    this.settled = true;
    // Outcomes of ops still in flight (a race's loser) are fine; journaled ops the code never reached are not,
    // unless the code stopped with a Cairn error of its own (e.g. a refused manifest): that says more.
    const missing = this.replay.unissuedAtEnd(!result.ok && isCairnError(result.error));
    if (missing) {
      await this.failWithoutCompensating(missing);
      return;
    }
    if (this.saga.halted || this.saga.used) {
      await this.finishSaga(this.sagaEnd(result));
      return;
    }
    this.abortController.abort(new Error("workflow finished"));
    crashPoint("before-complete");
    if (result.ok) {
      let entry: NewEntry;
      try {
        entry = journaledValue(
          "run.completed",
          null,
          { output: result.value },
          (copy) => copy.output,
          this.host.maxPayloadBytes,
          "The workflow's output",
        ).entry;
      } catch (error) {
        await this.writeFailure(error);
        return;
      }
      const ok = await this.tryWrite([entry]);
      if (ok) this.end("completed");
    } else {
      await this.writeFailure(result.error);
    }
  }

  private failNonDeterminism(error: NonDeterminismError): void {
    if (this.settled) return;
    this.settled = true;
    this.abortController.abort(error);
    void this.failWithoutCompensating(error);
  }

  /**
   * Fails a run whose code no longer matches its journal. No compensation runs (the run can be retried
   * once the right code is deployed, and undoing its work would make that pointless), but resources are
   * still given back: those whose release function the replayed code registered again are released,
   * journaled like any release; the others are journaled as `resource.release_failed` (see Saga.releaseAll).
   */
  private async failWithoutCompensating(error: unknown): Promise<void> {
    if (this.saga.used) {
      if (this.finishing || this.ended) return;
      this.finishing = true;
      // A step still running may complete now and register a resource: wait for it (its signal was aborted).
      if (this.inflight > 0) await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
      try {
        await this.releaseHeld();
      } catch (caught) {
        this.onInternalError("saga", caught);
        return;
      }
      crashPoint("before-saga-end");
    }
    await this.writeFailure(error);
  }

  /** Releases every resource still held; a failure is journaled by the saga and logged here, never fatal. */
  private releaseHeld(): Promise<void> {
    return this.saga.releaseAll(this, (key, error) =>
      this.host.logger.log("error", "a resource could not be released; the run ends anyway", { runId: this.runId, opKey: key, error }),
    );
  }

  private async writeFailure(error: unknown): Promise<void> {
    // The run cancelled itself (a question for a person timed out with onTimeout "cancel").
    if (isCairnError(error, "RUN_CANCELLED") && (error as RunCancelledError).runId === this.runId) {
      const ok = await this.tryWrite([newEntry("run.cancelled", null, { reason: (error as RunCancelledError).reason })]);
      if (ok) this.end("failed");
      return;
    }
    const serialized: SerializedError = serializeError(error);
    const ok = await this.tryWrite([newEntry("run.failed", null, { error: serialized })]);
    if (ok) this.end("failed");
  }

  private onInternalError(key: string, error: unknown): void {
    if (this.ended) return;
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

  private end(end: ExecutionEnd): void {
    if (this.ended) return;
    this.ended = true;
    if (this.wakeTimer) clearTimeout(this.wakeTimer);
    this.finish(end);
  }

  // ── writes ───────────────────────────────────────────────────────────────

  /** Appends entries durably; throws LeaseLostError (and abandons) if the lease is gone. */
  async write(entries: NewEntry[]): Promise<number> {
    if (this.ended) throw new LeaseLostError(this.runId, this.epoch);
    const watched = this.openLoops.size > 0 ? this.watchForeign(entries) : null;
    let result: Awaited<ReturnType<ExecutionHost["commit"]>>;
    try {
      result = await this.host.commit({ runId: this.runId, epoch: this.epoch, entries });
    } finally {
      if (watched) {
        for (const open of watched) {
          open.foreignInFlight -= 1;
          if (open.foreignInFlight === 0) open.onForeignCommitted?.();
        }
      }
    }
    if (!result.ok) {
      const error = new LeaseLostError(this.runId, this.epoch);
      this.abandon(error);
      throw error;
    }
    // Keep the per-op history current, so an op relaunched after a wait sees what it wrote.
    entries.forEach((entry, i) => {
      if (entry.opKey === null || isSagaKind(entry.kind)) return;
      const seq = result.firstSeq + i;
      if (this.openLoops.size > 0) this.noteForeign(entry.opKey, seq);
      // An op of a loop iteration that has ended is forgotten: its late-committing outcome is not kept.
      if (!this.replay.issued.has(entry.opKey)) return;
      this.replay.journal.noteWritten(entry as NewEntry & { opKey: string }, seq);
    });
    return result.lastSeq;
  }

  private async tryWrite(entries: NewEntry[]): Promise<boolean> {
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

  private makeContext(scope: Scope): WorkflowContext {
    const self = this;
    const log = (level: "debug" | "info" | "warn" | "error") => (message: string, fields?: Record<string, unknown>) => {
      if (self.replayRemaining === 0) self.host.logger.log(level, message, { runId: self.runId, workflow: self.workflow.name, ...fields });
    };
    const logger: WorkflowLogger = { debug: log("debug"), info: log("info"), warn: log("warn"), error: log("error") };
    return {
      runId: this.runId,
      workflow: this.workflow.name,
      version: this.workflow.version,
      get replaying() {
        return self.replayRemaining > 0;
      },
      log: logger,
      step: (name, fn, options) => this.step(scope, name, fn, options),
      sleep: (name, duration) => this.sleep(scope, name, duration, undefined),
      sleepUntil: (name, until) => this.sleep(scope, name, undefined, until),
      waitForEvent: (type: string | EventDefinition, options?: WaitOptions) => this.waitForEvent(scope, eventName(type), options),
      child: (workflow, input, options) => this.child(scope, workflow, input, options),
      loop: (name, initial, body, options) => this.loop(scope, name, initial, body, options),
      askHuman: (request) => this.askHuman(scope, request),
      emit: (topic, payload, options) => this.emit(scope, topic, payload, options),
      searchJournal: (query, options) => this.searchJournal(scope, query, options),
      compensate: (reason) => this.requestCompensation(reason),
      acquire: (name, resource) => this.acquire(scope, name, resource),
      publish: (name, value) => {
        const checked = checkLiveName(name, "ctx.publish");
        const copy = journalable(value, this.host.maxPayloadBytes, `ctx.publish("${checked}"): the value`);
        return this.journalOnce(scope, `publish:${checked}`, "publish", (key) => publishEntry(key, checked, copy));
      },
      handle: (name, fn) => {
        const checked = checkLiveName(name, "ctx.handle");
        if (typeof fn !== "function") throw new ValidationError(`ctx.handle("${checked}") needs a handler function.`);
        if (scope.prefix !== "") throw new ValidationError(`ctx.handle("${checked}"): register handlers outside ctx.loop iterations.`);
        const reply: Parameters<typeof serveRequests>[3] = (requestId, outcome) =>
          this.journalOnce(scope, `reply:${checked}`, "request", (key) => replyEntry(key, checked, requestId, outcome));
        serveRequests(this.ctx, checked, fn as (payload: unknown) => unknown, reply, this.host.maxPayloadBytes);
      },
      continueAsNew: (input) => this.continueAsNew(input),
      now: (name = "now") => new Date(this.value(scope, name, () => this.host.clock()) as number),
      random: (name = "random") => this.value(scope, name, () => Math.random()) as number,
      uuid: (name = "uuid") => this.value(scope, name, () => randomUUID()) as string,
    };
  }

  private step<T>(scope: Scope, name: string, fn: (info: any) => Promise<T> | T, options: StepOptions<T> = {}, resource?: ResourceOptions<T>): Promise<T> {
    if (typeof fn !== "function") throw new ValidationError(`ctx.step("${name}") needs a function to run.`);
    if (options.compensate !== undefined && typeof options.compensate !== "function") {
      throw new ValidationError(`ctx.step("${name}"): compensate must be a function (result, { idempotencyKey }) => …`);
    }
    if (resource && scope.prefix !== "") {
      // A loop snapshot supersedes its iterations' entries: the acquisition would not survive a resume.
      throw new ValidationError(`ctx.acquire("${name}"): resources cannot be acquired inside ctx.loop iterations; acquire them outside the loop.`);
    }
    // Inside a loop iteration a compensate keeps its older meaning only (undo of an interrupted
    // reversible step): a snapshot would supersede the registration, so none is made there.
    const registers = resource !== undefined || (options.compensate !== undefined && scope.prefix === "");
    const cleanupPolicy = registers ? resolveRetryPolicy(name, resource ? resource.retry : (options.compensateRetry ?? options.retry)) : undefined;
    // Bad options fail the workflow code at the call, before anything is journaled.
    const policy = resolveRetryPolicy(name, options.retry);
    const timeoutMs = options.timeout === undefined ? undefined : toMs(options.timeout);
    if (options.intent !== undefined) {
      try {
        encode(options.intent);
      } catch (error) {
        throw new ValidationError(`ctx.step("${name}"): intent must be plain data the journal can hold (${(error as Error).message}).`);
      }
    }
    const key = this.issue(scope, name, "step");
    if (resource) this.saga.setReleaser(key, { fn: resource.release, policy: cleanupPolicy! });
    else if (registers) {
      this.saga.setCompensator(key, {
        fn: options.compensate!,
        policy: cleanupPolicy!,
        ...(options.effect === undefined ? {} : { effect: options.effect }),
        ...(options.reconcile === undefined ? {} : { reconcile: options.reconcile }),
      });
    }
    const limits = stepFlowLimits(name, options);
    return this.awaitOp<T>(key, () => runStep(this, key, fn, options, policy, timeoutMs, limits));
  }

  private sleep(scope: Scope, name: string, duration: Duration | undefined, until: Date | number | undefined): Promise<void> {
    const ms = duration === undefined ? undefined : toMs(duration);
    const untilMs = until === undefined ? undefined : until instanceof Date ? until.getTime() : until;
    if (until !== undefined && !Number.isFinite(untilMs)) throw new ValidationError(`ctx.sleepUntil("${name}") needs a valid Date or epoch ms.`);
    const key = this.issue(scope, name, "sleep");
    return this.awaitOp<void>(key, async () => {
      const started = this.replay.journal.first(key)?.data as EntryData["sleep.started"] | undefined;
      let wakeAt = started?.wakeAt;
      if (wakeAt === undefined) {
        wakeAt = untilMs ?? this.host.clock() + (ms ?? 0);
        await this.write([newEntry("sleep.started", key, { wakeAt })]);
        crashPoint("after-timer-armed", key);
      }
      if (wakeAt <= this.host.clock()) {
        this.commitOutcome(key, [newEntry("sleep.completed", key, {})], { ok: true, value: undefined });
      } else {
        this.block({ kind: "timer", opKey: key, wakeAt });
      }
    });
  }

  private waitForEvent<T>(scope: Scope, type: string, options: WaitOptions = {}): Promise<T> {
    if (typeof type !== "string" || type.length === 0) throw new ValidationError("ctx.waitForEvent needs a non-empty event type.");
    const timeoutMs = options.timeout === undefined ? undefined : toMs(options.timeout);
    const match = checkMatch(options.match, `ctx.waitForEvent("${type}")`);
    const key = this.issue(scope, options.name ?? type, "event");
    return this.awaitOp<T>(key, async () => {
      const waiting = this.replay.journal.first(key)?.data as EntryData["event.waiting"] | undefined;
      let timeoutAt = waiting ? waiting.timeoutAt : null;
      if (!waiting) {
        timeoutAt = timeoutMs === undefined ? null : this.host.clock() + timeoutMs;
        await this.write([newEntry("event.waiting", key, { type, timeoutAt, ...(match ? { match } : {}) })]);
      }
      // The journaled match wins on resume, so a wait keeps the filter it was issued with.
      const event = await this.takeEvent(type, waiting ? waiting.match : match);
      if (event) {
        crashPoint("before-consume", key);
        // Keeps a secret payload's mark in the journal, so views of the entry redact it.
        const payload = decodeKeepingSecrets(event.payload);
        this.commitOutcome(
          key,
          [newEntry("event.received", key, { type, eventId: event.eventId, payload, inboxId: event.id })],
          { ok: true, value: decode(event.payload) },
          () => crashPoint("after-consume", key),
        );
      } else if (timeoutAt !== null && timeoutAt <= this.host.clock()) {
        this.commitOutcome(key, [newEntry("event.timedout", key, {})], { ok: false, error: new TimeoutError(key, `event "${type}"`) });
      } else {
        this.block({ kind: "event", opKey: key, type, timeoutAt });
      }
    });
  }

  /** The oldest unconsumed inbox event of this type that no other wait in this execution has taken. */
  async takeEvent(type: string, match?: Record<string, unknown>): Promise<{ id: number; eventId: string; payload: string } | undefined> {
    if (match) return takeMatching(this.host.store, this.runId, type, match, this.reservedInbox);
    const events = await this.host.store.pendingEvents(this.runId, type, 16);
    const event = events.find((e) => !this.reservedInbox.has(e.id));
    if (event) this.reservedInbox.add(event.id);
    return event;
  }

  private child<I, O>(scope: Scope, workflow: Workflow<I, O>, input: I, options: ChildOptions = {}): Promise<O> {
    if (!workflow || typeof workflow.name !== "string" || typeof workflow.run !== "function") {
      throw new ValidationError("ctx.child needs a workflow made with defineWorkflow.");
    }
    const key = this.issue(scope, options.name ?? workflow.name, "child");
    return this.awaitOp<O>(key, async () => {
      const started = this.replay.journal.first(key)?.data as EntryData["child.started"] | undefined;
      const childRunId = started?.childRunId ?? options.runId ?? `${this.runId}/${key}`;
      if (!started) {
        const encoded = encode(input);
        // A child joins its workflow's default queue, like a run started with engine.start.
        const flow = workflow.queue === undefined ? {} : { flow: { queue: workflow.queue, concurrencyKey: null, priority: 0 } };
        // A child inherits its parent's tags.
        const tags = await this.host.store.getRunTags(this.runId);
        const inherited = Object.keys(tags).length > 0 ? { tags } : {};
        await this.write([
          newEntry("child.started", key, { childRunId, workflow: workflow.name, version: workflow.version, input: decode(encoded), ...flow, ...inherited }),
        ]);
        this.host.kick();
      }
      const started0 = await this.host.store.getRun(childRunId);
      // A child that continued as new is followed to the last run of its chain.
      const child = started0 && (await followChain(this.host.store, started0));
      if (
        child &&
        (child.status === "completed" ||
          child.status === "failed" ||
          child.status === "cancelled" ||
          child.status === "compensated" ||
          child.status === "compensation_failed")
      ) {
        if (child.status === "completed") {
          this.commitOutcome(key, [newEntry("child.completed", key, { output: decode(child.output) })], { ok: true, value: decode(child.output) });
        } else {
          const error = decode<SerializedError>(child.error) ?? { name: "Error", message: child.status };
          const entry = newEntry("child.failed", key, { error, status: child.status });
          this.commitOutcome(key, [entry], this.replay.outcomeOf(key, { seq: 0, kind: "child.failed", data: entry.data }));
        }
      } else {
        this.block({ kind: "child", opKey: key, childRunId: child?.runId ?? childRunId });
      }
    });
  }

  private searchJournal(scope: Scope, query: string, options: { limit?: number; name?: string } = {}): Promise<JournalSearchHit[]> {
    if (typeof query !== "string") throw new ValidationError("ctx.searchJournal needs a query string.");
    const limit = options.limit ?? 10;
    if (!Number.isSafeInteger(limit) || limit < 1 || limit > 1000) throw new ValidationError("ctx.searchJournal: limit must be a whole number from 1 to 1000.");
    // A step: what the search found is journaled, so replay returns the same hits.
    return this.step(scope, options.name ?? "search", () => this.host.store.searchJournal(this.runId, query, limit), { effect: "none" });
  }

  private askHuman<T>(scope: Scope, request: AskHumanRequest): Promise<HumanReply<T>> {
    const checked = checkAskHuman(request);
    const key = this.issue(scope, request.name ?? "ask", "human");
    return this.awaitOp<HumanReply<T>>(key, () => runAskHuman(this, key, checked));
  }

  // ── sagas and resources (engine/saga.ts) ────────────────────────────────

  private acquire<T>(scope: Scope, name: string, resource: ResourceOptions<T>): Promise<ResourceHandle<T>> {
    if (typeof name !== "string" || name.length === 0) throw new ValidationError(`ctx.acquire needs a non-empty resource name (got ${JSON.stringify(name)}).`);
    if (!resource || typeof resource.acquire !== "function" || typeof resource.release !== "function") {
      throw new ValidationError(`ctx.acquire("${String(name)}") needs { acquire, release } functions.`);
    }
    const acquired = this.step<T>(scope, `acquire:${String(name)}`, resource.acquire, { effect: "idempotent", retry: resource.retry }, resource);
    const key = lastOpKey(scope, `acquire:${String(name)}`);
    return acquired.then((value) => ({ value, key, release: () => this.releaseResource(key) }));
  }

  /** The workflow's `handle.release()`: journaled, run at most once to success; replay returns at once. */
  private async releaseResource(key: string): Promise<void> {
    if (this.saga.isReleased(key) || this.settled) return;
    this.inflight += 1;
    try {
      const result = await this.saga.release(this, key);
      if (!result.ok) throw new StepFailedError(key, result.error, result.attempts);
    } finally {
      this.inflight -= 1;
      if (this.inflight === 0) for (const idle of this.idleWaiters.splice(0)) idle();
      this.scheduleCheck();
    }
  }

  /** `ctx.compensate()`: unwinds the saga and ends the run; workflow code never resumes after it. */
  private requestCompensation(reason: unknown): Promise<never> {
    if (reason !== undefined && typeof reason !== "string") throw new ValidationError("ctx.compensate(reason): reason must be a string.");
    if (!this.settled) {
      this.settled = true;
      const error: SerializedError = { name: "CompensationRequested", message: reason ?? "The workflow called ctx.compensate()." };
      void this.finishSaga({ kind: "failed", reason: "requested", error });
    }
    return new Promise<never>(noop);
  }

  /** How a run being cancelled or compensated ends, as its journal says. */
  private haltedEnd(): SagaEnd {
    const unwinding = this.saga.unwinding;
    if (unwinding) return { kind: "failed", reason: unwinding.reason, error: unwinding.error };
    const reason = this.saga.cancelling?.reason;
    return { kind: "failed", reason: "cancelled", error: cancelCause(reason), ...(reason === undefined ? {} : { cancelReason: reason }) };
  }

  /** How a run that uses sagas or resources ends once its workflow function settled. */
  private sagaEnd(result: Outcome): SagaEnd {
    if (this.saga.halted) return this.haltedEnd();
    if (!result.ok) {
      const error = result.error;
      if (isCairnError(error, "RUN_CANCELLED") && (error as RunCancelledError).runId === this.runId) {
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
        this.host.maxPayloadBytes,
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
    if (this.finishing || this.ended) return;
    this.finishing = true;
    this.settled = true;
    if (this.inflight > 0) await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
    try {
      const saga = this.saga;
      if (end.kind === "failed") saga.noteInterrupted(this.interruptedCompensable());
      let unwinding = saga.unwinding;
      if (!unwinding && end.kind === "failed" && (saga.hasCompensations || end.reason === "requested")) {
        unwinding = { reason: end.reason, error: end.error };
        await this.write([newEntry("saga.compensating", null, unwinding)]);
        saga.unwinding = unwinding;
      }
      let terminal: NewEntry;
      if (unwinding) {
        const result = await saga.compensate(this);
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
      this.abortController.abort(new Error("workflow finished"));
      const ok = await this.tryWrite([terminal]);
      if (ok) this.end(terminal.kind === "run.completed" ? "completed" : "failed");
    } catch (error) {
      this.onInternalError("saga", error);
    }
  }

  /** Steps with a compensate whose last journaled entry is an intent: cut off mid-flight (by a cancel's fence), in intent order. */
  private interruptedCompensable(): string[] {
    const found: { key: string; seq: number }[] = [];
    for (const [key, entries] of this.replay.journal) {
      const last = entries.at(-1);
      if (last?.kind === "step.started" && (last.data as EntryData["step.started"]).compensable) found.push({ key, seq: last.seq });
    }
    return found.sort((a, b) => a.seq - b.seq).map((f) => f.key);
  }

  private emit(scope: Scope, topic: string, payload: unknown, options?: EmitOptions): Promise<EmittedMessage> {
    const checked = checkEmit(topic, payload, options, this.host.maxPayloadBytes);
    const key = this.issue(scope, checked.name, "emit");
    const mismatch = emitMismatch(key, this.replay.journal.first(key), checked.topic);
    if (mismatch) {
      this.failNonDeterminism(mismatch);
      throw mismatch;
    }
    // Journaled once: on replay the outcome comes from the journal and this never runs again.
    return this.awaitOp<EmittedMessage>(key, async () => {
      const entry = emitEntry(this.runId, key, checked);
      this.commitOutcome(key, [entry], { ok: true, value: { messageId: entry.data.messageId } });
    });
  }

  /** An op whose only effect is its entry (publish, reply): journaled once, delivered in journal order. */
  private journalOnce(scope: Scope, name: string, kind: OpKind, make: (key: string) => NewEntry): Promise<void> {
    const key = this.issue(scope, name, kind);
    return this.awaitOp<void>(key, async () => this.commitOutcome(key, [make(key)], { ok: true, value: undefined }, () => crashPoint("after-reply", key)));
  }

  /** `ctx.continueAsNew`: one commit ends this run and creates the next (engine/live-ops.ts). */
  private continueAsNew(input: unknown): Promise<never> {
    if (this.saga.used) throw new ValidationError("ctx.continueAsNew cannot end a run that registered compensations or holds resources.");
    const copy = journalable(input, this.host.maxPayloadBytes, "ctx.continueAsNew: the input");
    if (!this.settled) {
      this.settled = true;
      this.abortController.abort(new Error("workflow continued as new"));
      void (async () => {
        const entry = continueEntry(this.run, this.workflow, copy, await this.host.store.getRunTags(this.runId), this.host.maxPayloadBytes);
        crashPoint("before-continue");
        const ok = await this.tryWrite([entry]);
        crashPoint("after-continue");
        if (ok) {
          this.host.kick();
          this.end("completed");
        }
      })().catch((error: unknown) => this.onInternalError("continueAsNew", error));
    }
    return new Promise<never>(noop);
  }

  // ── loops ────────────────────────────────────────────────────────────────

  private loop<S, R>(
    scope: Scope,
    name: string,
    initial: S,
    body: (state: S, iteration: LoopIteration) => Promise<S | LoopDone<R>> | S | LoopDone<R>,
    options: LoopOptions = {},
  ): Promise<R> {
    if (typeof body !== "function") throw new ValidationError(`ctx.loop("${name}") needs a body function.`);
    const snapshotEvery = options.snapshotEvery ?? 10;
    if (!Number.isSafeInteger(snapshotEvery) || snapshotEvery < 0) {
      throw new ValidationError(`ctx.loop("${name}"): snapshotEvery must be a whole number of iterations, 0 or more (got ${String(options.snapshotEvery)}).`);
    }
    const key = this.issue(scope, name, "loop");
    // Workflow code, not an effect: it runs during replay, and does not count as in flight (its ops
    // do), so a loop waiting on an event still lets the run suspend. A completed loop's journaled
    // result is delivered in order and the body never runs.
    return this.registerOp<R>(
      key,
      noop,
      () =>
        void this.runLoop(key, initial, body, snapshotEvery).catch((error: unknown) => {
          const waiter = this.replay.waiters.get(key);
          this.replay.waiters.delete(key);
          waiter?.reject(error);
        }),
    );
  }

  private async runLoop<S, R>(
    key: string,
    initial: S,
    body: (state: S, iteration: LoopIteration) => Promise<S | LoopDone<R>> | S | LoopDone<R>,
    snapshotEvery: number,
  ): Promise<void> {
    const journaled = this.replay.journal.entries(key);
    const startedSeq = journaled.find((entry) => entry.kind === "loop.started")?.seq ?? (await this.write([newEntry("loop.started", key, { snapshotEvery })]));
    const snapshot = journaled.findLast((entry) => entry.kind === "loop.snapshot")?.data as EntryData["loop.snapshot"] | undefined;
    const open: OpenLoop = { key, prefix: `${key}/`, from: startedSeq + 1, keep: new Set(snapshot?.keep), foreignInFlight: 0, onForeignCommitted: null };
    // Entries of other ops written since the loop started, read on this resume: later checkpoints keep them too.
    for (const [other, entries] of this.replay.journal) {
      if (other === key || other.startsWith(open.prefix)) continue;
      for (const entry of entries) if (entry.seq >= open.from) open.keep.add(entry.seq);
    }
    this.openLoops.add(open);
    let iteration = snapshot?.iteration ?? 0;
    let state = (snapshot ? snapshot.state : initial) as S;
    try {
      for (;;) {
        const scope = iterationScope(key, iteration);
        const index = iteration;
        const next = await body(state, { ctx: this.makeContext(scope), index, done: <V>(result: V) => new LoopDone(result) });
        if (this.ended || this.settled) return;
        this.endIteration(key, index, scope);
        iteration += 1;
        if (next instanceof LoopDone) {
          // The completion supersedes the loop's range: every other op's entry in it must have its seq.
          if (open.foreignInFlight > 0) await new Promise<void>((resolve) => (open.onForeignCommitted = resolve));
          if (this.ended || this.settled) return;
          const { entry, value } = journaledValue(
            "loop.completed",
            key,
            { result: next.result, iterations: iteration, from: open.from, keep: [...open.keep] },
            (copy) => copy.result,
            this.host.maxPayloadBytes,
            `The result of loop "${key}"`,
          );
          this.openLoops.delete(open);
          this.commitOutcome(key, [entry], { ok: true, value });
          return;
        }
        state = next;
        if (snapshotEvery > 0 && iteration % snapshotEvery === 0) {
          const { entry, value } = journaledValue(
            "loop.snapshot",
            key,
            { iteration, state, from: open.from, keep: [...open.keep] },
            (copy) => copy.state,
            this.host.maxPayloadBytes,
            `The state of loop "${key}"`,
          );
          // Queued before the next iteration issues anything, so it lands before that iteration's entries.
          // Skipped while another op's entries are in flight (their seqs, to keep, are unknown yet):
          // the next snapshot covers this one's ground.
          if (open.foreignInFlight === 0) {
            this.write([entry]).then(
              () => crashPoint("after-snapshot", key),
              (error: unknown) => this.onInternalError(key, error),
            );
          }
          // Go on with the copy a resume would load, so live and resumed runs see the same state.
          state = value as S;
        }
      }
    } finally {
      this.openLoops.delete(open);
    }
  }

  /** Checks an iteration against the journal, then forgets its ops so a long loop holds no history. */
  private endIteration(key: string, index: number, scope: Scope): void {
    const error = this.replay.endIteration(key, index, scope, (k) => this.launches.delete(k));
    if (error) {
      this.failNonDeterminism(error);
      throw error;
    }
  }

  /** The open loops for which these entries are another op's; their snapshots wait until they commit. */
  private watchForeign(entries: NewEntry[]): OpenLoop[] | null {
    let watched: OpenLoop[] | null = null;
    for (const open of this.openLoops) {
      if (!entries.some((entry) => entry.opKey !== null && entry.opKey !== open.key && !entry.opKey.startsWith(open.prefix))) continue;
      open.foreignInFlight += 1;
      (watched ??= []).push(open);
    }
    return watched;
  }

  /** Records an entry of some other op written while loops run: their checkpoints must keep it. */
  private noteForeign(opKey: string, seq: number): void {
    for (const open of this.openLoops) {
      if (seq >= open.from && opKey !== open.key && !opKey.startsWith(open.prefix)) open.keep.add(seq);
    }
  }

  private value(scope: Scope, name: string, make: () => unknown): unknown {
    const key = this.issue(scope, name, "value");
    const recorded = this.replay.journal.first(key)?.data as EntryData["value.recorded"] | undefined;
    if (recorded) return recorded.value;
    const value = make();
    this.write([newEntry("value.recorded", key, { value })]).catch(noop);
    return value;
  }

  // ── accessors for the step runner ────────────────────────────────────────

  /** What the journal holds for a step key. */
  stepHistory(key: string): StepHistory {
    return { entries: this.replay.journal.entries(key), retried: this.replay.journal.wasRetried(key) };
  }

  get hostRef(): ExecutionHost {
    return this.host;
  }

  get isDraining(): boolean {
    return this.draining;
  }

  get isEnded(): boolean {
    return this.ended;
  }
}
