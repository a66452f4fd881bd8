import type { CredentialBroker } from "./credentials.js";
import type { QueueLimits } from "../core/flow-control.js";
import { randomBytes } from "node:crypto";
import type { LiveDeltaPublisher } from "./live-publisher.js";
import { hostname } from "node:os";
import { z } from "zod";
import { versionRefSchema } from "../core/deploys.js";
import { ValidationError } from "../core/errors.js";
import { newEntry } from "../core/journal.js";
import type { RunRecord } from "../core/run.js";
import { serializeError } from "../core/serialize.js";
import type { CommitResult, RunWrite, Store } from "../core/store.js";
import type { Committer } from "./committer.js";
import type { EngineLogger, Worker, WorkerOptions } from "./engine.js";
import { Execution, type ExecutionEnd } from "./execution.js";
import type { ExecutionHost } from "./execution-host.js";
import { StepTracker, type EngineEvent, type StepAttempt } from "./observer.js";
import type { Workflow } from "./workflow.js";

/** What a worker needs from its engine. */
export interface WorkerDeps {
  store: Store;
  committer: Committer;
  clock: () => number;
  logger: EngineLogger;
  maxPayloadBytes: number;
  /** Registered workflows by `name@version`. */
  workflows: Map<string, Workflow<any, any>>;
  /** Declared queues (flow control); empty when none, and claims then name no queue. */
  queues: readonly QueueLimits[];
  /** Called when an execution ends (so `result()` waiters wake at once). */
  onExecutionEnd(runId: string, end: ExecutionEnd, parentRunId: string | null, completed?: string): void;
  /** Versions (`name@version`) this engine drained, known before the worker first reads the store. */
  drained?: Iterable<string>;
  /** Dead-letter limit passed to claims (`createEngine({ maxRecoveryAttempts })`); undefined (0 given): off. */
  maxRecoveryAttempts?: number;
  /** Carries live deltas to streams of other processes (see live-publisher.ts). */
  live?: LiveDeltaPublisher;
  /** Hands engine events to observers; undefined while nobody observes, so unobserved workers track nothing. */
  report(): ((event: EngineEvent) => void) | undefined;
  /** The observers' `aroundStep` wrappers, composed; undefined while none has one (steps then run bare). */
  aroundStep?(): (<T>(step: StepAttempt, run: () => T) => T) | undefined;
  /** The engine's credentials (`ctx.credential`). */
  credentials?: CredentialBroker;
}

const optionsSchema = z
  .object({
    concurrency: z.number().int().min(1).max(10_000).default(16),
    pollInterval: z.number().int().min(1).max(60_000).default(200),
    leaseMs: z.number().int().min(100).max(3_600_000).default(30_000),
    heartbeatMs: z.number().int().min(10).optional(),
    workerId: z.string().min(1).max(200).optional(),
    retire: z.array(versionRefSchema).max(1000).optional(),
    drain: z.array(versionRefSchema).max(1000).optional(),
  })
  .strict();

/** Claims runnable runs, executes them under a lease, heartbeats, and drains on stop. */
export class WorkerImpl implements Worker, ExecutionHost {
  readonly workerId: string;
  readonly store: Store;
  readonly maxPayloadBytes: number;
  readonly logger: EngineLogger;
  private readonly executions = new Map<string, Execution>();
  private readonly concurrency: number;
  private readonly pollInterval: number;
  private readonly leaseMs: number;
  private readonly heartbeatTimer: NodeJS.Timeout;
  private stopping = false;
  /** Registry writes in flight (`upsertWorker`); `stop()` waits for them before removing the row. */
  private readonly registrations = new Set<Promise<void>>();
  /** Set when stopping removes this worker from the registry: no registration after that. */
  private unregistered = false;
  /** Stopping with `drain` (the default): executions launched from now on are drained before they start. */
  private draining = false;
  private wake: (() => void) | null = null;
  private kicked = false;
  private kickQueued = false;
  private wakeTimer: NodeJS.Timeout | null = null;
  private wakeTimerAt = Infinity;
  private readonly loopDone: Promise<void>;
  private readonly startedAt: number;
  /** When each held run's lease was last proven (claimed or renewed), by runId. */
  private readonly provenAt = new Map<string, number>();
  /** Workflow names of held runs, for events. */
  private readonly workflowOf = new Map<string, string>();
  private readonly steps = new StepTracker();
  /** Executions whose lease loss was reported (once each). */
  private readonly lostReported = new WeakSet<Execution>();
  /** Slots promised to runs this engine is creating already claimed for this worker (see {@link reserve}). */
  private reserved = 0;
  private reservationsSettled: (() => void) | null = null;
  /** `name@version` this worker was told not to claim (`WorkerOptions.retire`, or its deprecated name `drain`). */
  private readonly drainedHere: Set<string>;
  /** `name@version` retired in the store (`engine.retireVersion`), refreshed on every heartbeat. */
  private drainedInStore = new Set<string>();
  private refreshing = false;

  constructor(
    private readonly deps: WorkerDeps,
    options: WorkerOptions = {},
  ) {
    const parsed = optionsSchema.safeParse(options);
    if (!parsed.success) throw new ValidationError(`startWorker: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`);
    const opts = parsed.data;
    this.concurrency = opts.concurrency;
    this.pollInterval = opts.pollInterval;
    this.leaseMs = opts.leaseMs;
    this.workerId = opts.workerId ?? `${hostname()}:${process.pid}:${randomBytes(3).toString("hex")}`;
    this.drainedHere = new Set([...(opts.retire ?? []), ...(opts.drain ?? [])].map((ref) => `${ref.workflow}@${ref.version}`));
    this.drainedInStore = new Set(deps.drained);
    this.store = deps.store;
    this.maxPayloadBytes = deps.maxPayloadBytes;
    this.logger = deps.logger;
    this.startedAt = this.clock();
    this.heartbeatTimer = setInterval(() => void this.heartbeatAll(), opts.heartbeatMs ?? Math.max(10, Math.floor(this.leaseMs / 3)));
    this.loopDone = Promise.all([this.register(), this.refreshDrained()]).then(() => this.loop());
  }

  get active(): number {
    return this.executions.size;
  }

  clock(): number {
    return this.deps.clock();
  }

  get credentials(): CredentialBroker | undefined {
    return this.deps.credentials;
  }

  commit(write: RunWrite): Promise<CommitResult> {
    const committed = this.deps.committer.commit(write);
    const live = this.deps.live?.has(write.runId) ? this.deps.live : undefined;
    if (!this.deps.report() && !live) return committed;
    return committed.then((result) => {
      if (live && result.ok) live.committed(write.runId, write.entries);
      const report = this.deps.report();
      if (report && result.ok) {
        const workflow = this.workflowOf.get(write.runId) ?? "";
        for (const event of this.steps.onCommitted(write.runId, workflow, write.entries, this.clock())) report(event);
        let bytes = 0;
        for (const entry of write.entries) bytes += Buffer.byteLength(entry.payload);
        report({ type: "committed", runId: write.runId, workflow, entries: write.entries.length, bytes });
      } else if (!result.ok && result.reason === "lease-lost") {
        this.reportLeaseLost(write.runId);
      }
      return result;
    });
  }

  /** Tells observers that this worker lost a held run's lease, once per execution. */
  private reportLeaseLost(runId: string): void {
    const execution = this.executions.get(runId);
    const report = this.deps.report();
    if (!execution || !report || execution.isEnded || this.lostReported.has(execution)) return;
    this.lostReported.add(execution);
    report({ type: "lease-lost", runId, workflow: this.workflowOf.get(runId) ?? "", workerId: this.workerId });
  }

  /**
   * Takes a slot for a run that `engine.start` is about to create, so that it can be created
   * already claimed by this worker (no claim transaction, no wait for the claim loop). Returns
   * the claim to create it with, or undefined when this worker is full, stopping, or does not
   * run that workflow version. Every reservation must be settled with {@link adopt}.
   */
  reserve(workflow: { name: string; version: string }): { workerId: string; leaseMs: number } | undefined {
    const key = `${workflow.name}@${workflow.version}`;
    if (this.stopping || !this.deps.workflows.has(key) || this.isDrained(key)) return undefined;
    if (this.executions.size + this.reserved >= this.concurrency) return undefined;
    this.reserved += 1;
    return { workerId: this.workerId, leaseMs: this.leaseMs };
  }

  /** Settles a reservation: runs the run created claimed by this worker, or (undefined: not created) frees the slot. */
  adopt(run: RunRecord | undefined): void {
    this.reserved -= 1;
    if (run) this.launch(run, true);
    else this.kick();
    if (this.reserved === 0) this.reservationsSettled?.();
  }

  /** Wake the claim loop now. */
  kick(): void {
    this.kicked = true;
    this.wake?.();
  }

  scheduleWake(at: number): void {
    const delay = at - this.clock();
    if (delay <= 0) return this.kick();
    if (at >= this.wakeTimerAt || delay > 2_147_000_000) return;
    if (this.wakeTimer) clearTimeout(this.wakeTimer);
    this.wakeTimerAt = at;
    this.wakeTimer = setTimeout(() => {
      this.wakeTimer = null;
      this.wakeTimerAt = Infinity;
      this.kick();
    }, delay + 1);
  }

  aroundStep<T>(runId: string, opKey: string, attempt: number, run: () => T): T {
    const around = this.deps.aroundStep?.();
    return around ? around({ runId, workflow: this.workflowOf.get(runId) ?? "", opKey, attempt }, run) : run();
  }

  progress(runId: string, opKey: string, attempt: number, data: unknown): void {
    this.deps.live?.progress(runId, opKey, attempt, data);
    const report = this.deps.report();
    if (report) report({ type: "step-progress", runId, workflow: this.workflowOf.get(runId) ?? "", opKey, attempt, data });
  }

  heartbeat(runId: string): void {
    const execution = this.executions.get(runId);
    if (execution) void this.renew([execution]);
  }

  /** Something arrived for this run (event, answer, child result): if it is held here, look now. */
  notify(runId: string): void {
    this.executions.get(runId)?.recheckWaits();
  }

  /** Whether an execution of the run is live here: the run is not finished until it ends. */
  holds(runId: string): boolean {
    const execution = this.executions.get(runId);
    return execution !== undefined && !execution.isEnded;
  }

  /** Abandon a run held here (it was cancelled elsewhere in this process). */
  abandonRun(runId: string, reason: unknown): void {
    this.executions.get(runId)?.abandon(reason);
  }

  async stop(options: { drain?: boolean } = {}): Promise<void> {
    if (!this.stopping) {
      this.stopping = true;
      this.draining = options.drain !== false;
      this.kick();
      if (this.wakeTimer) clearTimeout(this.wakeTimer);
    }
    // Drain at once, not after the claim loop ends: a claim in flight may take a round trip, and
    // meanwhile a held run would start its next step. Runs that claim brings are drained as they launch.
    if (this.draining) for (const execution of this.executions.values()) execution.drain();
    await this.loopDone;
    // A run being created claimed by this worker is held as soon as it exists: wait for it, then drain it too.
    while (this.reserved > 0) await new Promise<void>((resolve) => (this.reservationsSettled = resolve));
    const running = [...this.executions.values()];
    if (options.drain === false) {
      for (const execution of running) {
        execution.abandon(new Error("worker stopped"));
        await this.deps.committer
          .commit({ runId: execution.runId, epoch: execution.epoch, entries: [releasedEntry(this.workerId, true)] })
          .catch(() => undefined);
      }
    } else {
      for (const execution of running) execution.drain();
    }
    await Promise.all(running.map((execution) => execution.done));
    clearInterval(this.heartbeatTimer);
    // A heartbeat's registration still in flight would write the row back after its removal.
    this.unregistered = true;
    await Promise.all(this.registrations);
    await this.store.removeWorker(this.workerId).catch(() => undefined);
  }

  /**
   * Stops (or resumes) claiming runs of a workflow version at once in this worker; other workers
   * learn it from the store on their next heartbeat.
   */
  setDrained(workflow: string, version: string, drained: boolean): void {
    const key = `${workflow}@${version}`;
    if (drained) this.drainedInStore.add(key);
    else this.drainedInStore.delete(key);
    if (!drained) this.kick();
  }

  private isDrained(key: string): boolean {
    return this.drainedHere.has(key) || this.drainedInStore.has(key);
  }

  /**
   * Reads the drained versions from the store: before the first claim, then on every heartbeat beside
   * (never before) the lease renewal, and never per claim. One read at a time.
   */
  private async refreshDrained(): Promise<void> {
    if (this.refreshing) return;
    this.refreshing = true;
    try {
      const drained = await this.store.listDrainedVersions();
      const next = new Set(drained.map((d) => `${d.workflow}@${d.version}`));
      const undrained = [...this.drainedInStore].some((key) => !next.has(key));
      this.drainedInStore = next;
      if (undrained) this.kick();
    } catch (error) {
      this.logger.log("warn", "could not read the drained versions; keeping the last known list", { workerId: this.workerId, error: serializeError(error) });
    } finally {
      this.refreshing = false;
    }
  }

  /** Announces this worker in the registry (`cairn workers`); failures only delay it to the next heartbeat. */
  private register(): Promise<void> {
    if (this.unregistered) return Promise.resolve();
    const registration = this.upsertSelf().finally(() => this.registrations.delete(registration));
    this.registrations.add(registration);
    return registration;
  }

  private async upsertSelf(): Promise<void> {
    try {
      await this.store.upsertWorker({
        workerId: this.workerId,
        host: hostname(),
        pid: process.pid,
        workflows: this.registered().map((w) => `${w.name}@${w.version}`),
        runsHeld: this.executions.size,
        startedAt: this.startedAt,
        heartbeatAt: this.clock(),
      });
    } catch (error) {
      this.logger.log("warn", "could not record the worker in the registry", { workerId: this.workerId, error: serializeError(error) });
    }
  }

  private async loop(): Promise<void> {
    let failures = 0;
    while (!this.stopping) {
      const free = this.concurrency - this.executions.size - this.reserved;
      const limit = Math.min(free, 64);
      let claimed: RunRecord[] = [];
      const workflows = this.claimable();
      if (workflows.length === 0) this.kicked = false; // everything drained: only the poll looks again
      if (limit > 0 && workflows.length > 0) {
        try {
          this.kicked = false;
          const queues = this.deps.queues.length > 0 ? { queues: [...this.deps.queues] } : {};
          claimed = await this.store.claimRuns({
            workerId: this.workerId,
            now: this.clock(),
            leaseMs: this.leaseMs,
            limit,
            workflows,
            ...queues,
            ...(this.deps.maxRecoveryAttempts === undefined ? {} : { maxRecoveryAttempts: this.deps.maxRecoveryAttempts }),
          });
          failures = 0;
        } catch (error) {
          failures += 1;
          this.logger.log("warn", "claim failed; retrying with back-off", { workerId: this.workerId, error: serializeError(error) });
          await this.idle(Math.min(5_000, this.pollInterval * 2 ** failures));
          continue;
        }
      }
      for (const run of claimed) this.launch(run, firstClaim(run));
      if (this.stopping) break;
      if (claimed.length > 0 && claimed.length === limit) continue;
      if (this.kicked && limit > 0) continue;
      await this.idle(this.pollInterval);
    }
  }

  private idle(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      const self = this;
      function done() {
        clearTimeout(timer);
        self.wake = null;
        resolve();
      }
      this.wake = done;
    });
  }

  private registered(): { name: string; version: string }[] {
    return [...this.deps.workflows.values()].map((w) => ({ name: w.name, version: w.version }));
  }

  /** The registered versions that are not drained: what a claim asks for. */
  private claimable(): { name: string; version: string }[] {
    const all = this.registered();
    if (this.drainedHere.size === 0 && this.drainedInStore.size === 0) return all;
    return all.filter((w) => !this.isDrained(`${w.name}@${w.version}`));
  }

  /** `fresh`: created claimed by this worker just now (see {@link Execution}), so its journal is not read back. */
  private launch(run: RunRecord, fresh = false): void {
    const workflow = this.deps.workflows.get(`${run.workflow}@${run.version}`);
    if (!workflow) return; // cannot happen: claims are filtered by registered versions
    const execution = new Execution(this, run, workflow, fresh);
    this.executions.set(run.runId, execution);
    this.workflowOf.set(run.runId, run.workflow);
    const launchedAt = this.clock();
    this.provenAt.set(run.runId, launchedAt);
    this.deps.report()?.({ type: "execution-started", runId: run.runId, workflow: run.workflow, workerId: this.workerId });
    void execution.done.then((end) => {
      // Full until this end: runs may be waiting for the slot it frees.
      const wasFull = this.executions.size + this.reserved >= this.concurrency;
      this.deps.report()?.({
        type: "execution-ended",
        runId: run.runId,
        workflow: run.workflow,
        workerId: this.workerId,
        end,
        durationMs: Math.max(0, this.clock() - launchedAt),
      });
      this.deps.live?.runEnded(run.runId, end === "completed" || end === "failed" || end === "suspended");
      this.executions.delete(run.runId);
      this.workflowOf.delete(run.runId);
      this.steps.forget(run.runId);
      this.provenAt.delete(run.runId);
      // An execution abandoned on a store error still holds the lease: give it back (fenced by the
      // epoch, so this is a no-op if the run was taken over or cancelled) rather than make others wait.
      if (end === "abandoned" && !this.stopping) void this.releaseQuietly(run.runId, run.leaseEpoch);
      this.deps.onExecutionEnd(run.runId, end, run.parentRunId, execution.completedPayload);
      // Look for more work after the tick, not now: whoever waited on this run (result(), a
      // sequential caller's next start, which may take the slot) goes first, and executions
      // ending together share one claim. A run that finished in a worker with slots to spare frees
      // none that work was waiting for (the last claim found less than it could take; work since is
      // announced or polled), so it costs no claim; one that suspended or gave its lease back may be
      // claimable again itself.
      const finished = end === "completed" || end === "failed";
      if (!this.kickQueued && (wasFull || !finished)) {
        this.kickQueued = true;
        setImmediate(() => {
          this.kickQueued = false;
          this.kick();
        });
      }
    });
    if (this.draining) execution.drain();
    void execution.start();
  }

  private async releaseQuietly(runId: string, epoch: number): Promise<void> {
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        await this.deps.committer.commit({ runId, epoch, entries: [releasedEntry(this.workerId)] });
        return;
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 200 * 2 ** attempt).unref());
      }
    }
  }

  private async heartbeatAll(): Promise<void> {
    void this.refreshDrained();
    await this.register();
    if (this.executions.size === 0) return;
    await this.renew([...this.executions.values()]);
    // Events sent through another process reach a live run here, at the latest.
    for (const execution of this.executions.values()) if (execution.waitsOnOthers) execution.recheckWaits();
  }

  private async renew(executions: Execution[]): Promise<void> {
    try {
      const lost = await this.store.renewLeases({
        workerId: this.workerId,
        leases: executions.map((e) => ({ runId: e.runId, epoch: e.epoch })),
        now: this.clock(),
        leaseMs: this.leaseMs,
      });
      const now = this.clock();
      for (const execution of executions) this.provenAt.set(execution.runId, now);
      for (const runId of lost) {
        this.reportLeaseLost(runId);
        this.executions.get(runId)?.abandon();
      }
    } catch (error) {
      this.logger.log("warn", "lease renewal failed", { workerId: this.workerId, error: serializeError(error) });
      // Past its lease a run may belong to another worker: stop running its steps, even though
      // the epoch check would refuse our writes anyway.
      const deadline = this.clock() - this.leaseMs;
      for (const execution of executions) {
        if ((this.provenAt.get(execution.runId) ?? 0) < deadline) execution.abandon();
      }
    }
  }
}

/**
 * True for a run this claim took for the first time straight after its creation: lease epoch 1 and
 * last seq 2 leave room for nothing but `run.created` (seq 1 of every run) and this claim's
 * `run.claimed` (any other entry, or an earlier claim, would have moved them). Its execution starts
 * without reading that journal back, as for a run created claimed (see {@link Execution}).
 */
function firstClaim(run: RunRecord): boolean {
  return run.leaseEpoch === 1 && run.lastSeq === 2;
}

/** `stopped`: given back by a worker shutting down, not abandoned on an error (see the dead-letter count). */
function releasedEntry(workerId: string, stopped = false) {
  return newEntry("run.released", null, stopped ? { workerId, stopped } : { workerId });
}
