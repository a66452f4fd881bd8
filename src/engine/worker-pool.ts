import type { CredentialBroker } from "./credentials.js";
import type { LiveDeltaPublisher } from "./live-publisher.js";
import { EventEmitter } from "node:events";
import type { QueueLimits } from "../core/flow-control.js";
import type { RetentionPolicy } from "../core/retention-schemas.js";
import { serializeError } from "../core/serialize.js";
import type { Store } from "../core/store.js";
import type { Committer } from "./committer.js";
import { DispatcherImpl } from "./dispatcher.js";
import type { EngineLogger, Worker, WorkerOptions } from "./engine.js";
import { DeadlineSweeper } from "./live-runs.js";
import type { ObserverHub } from "./observer-hub.js";
import type { Dispatcher, DispatcherOptions } from "./outbox.js";
import type { OutboxRegistry } from "./outbox-registry.js";
import { RetentionScheduler } from "./retention.js";
import type { ScheduleService } from "./schedule-service.js";
import { WorkerImpl } from "./worker.js";
import type { Workflow } from "./workflow.js";

/** What the engine's workers and dispatchers need from it. */
export interface WorkerPoolDeps {
  /** The engine's credentials: revoked for a run when one of this pool's executions ends it. */
  credentials?: CredentialBroker;
  store: Store;
  committer: Committer;
  clock: () => number;
  logger: EngineLogger;
  maxPayloadBytes: number;
  /** Registered workflows by `name@version`. */
  workflows: Map<string, Workflow<any, any>>;
  queues: readonly QueueLimits[];
  /** Dead-letter limit; undefined: off. */
  maxRecoveryAttempts: number | undefined;
  observers: ObserverHub;
  outbox: OutboxRegistry;
  retention: RetentionPolicy | undefined;
  /** How often each worker's deadline sweeper looks for due deadlines (`createEngine({ deadlines })`). */
  deadlinePollMs: number;
  schedules: ScheduleService;
  /** Cancels a run whose deadline fell due. */
  cancel(runId: string, reason: string): Promise<unknown>;
  /** Carries live deltas to streams of other processes (see live-publisher.ts). */
  live?: LiveDeltaPublisher;
}

/**
 * The engine's local workers and outbox dispatchers: starting and stopping them, waking them when
 * work may exist, and telling `result()` waiters when a run this process executes ends.
 */
export class WorkerPool {
  private readonly workers = new Set<WorkerImpl>();
  private readonly dispatchers = new Set<DispatcherImpl>();
  private readonly finished = new EventEmitter();
  /** Versions this engine drained or undrained last, so its new workers know before reading the store. */
  private readonly drained = new Set<string>();

  constructor(private readonly deps: WorkerPoolDeps) {
    this.finished.setMaxListeners(0);
  }

  startWorker(allOptions?: WorkerOptions): Worker {
    const { deps } = this;
    const { dispatcher: dispatcherOptions, ...options } = allOptions ?? {};
    const dispatcher = dispatcherOptions === false ? undefined : this.startDispatcher(dispatcherOptions === true ? {} : dispatcherOptions);
    const worker = new WorkerImpl(
      {
        store: deps.store,
        committer: deps.committer,
        clock: deps.clock,
        logger: deps.logger,
        maxPayloadBytes: deps.maxPayloadBytes,
        workflows: deps.workflows,
        queues: deps.queues,
        drained: this.drained,
        ...(deps.maxRecoveryAttempts === undefined ? {} : { maxRecoveryAttempts: deps.maxRecoveryAttempts }),
        ...(deps.live ? { live: deps.live } : {}),
        ...(deps.credentials ? { credentials: deps.credentials } : {}),
        report: () => (deps.observers.active ? deps.observers.report : undefined),
        aroundStep: () => deps.observers.aroundStep(),
        onExecutionEnd: (runId, end, parentRunId, completed) => {
          this.finished.emit(runId, completed);
          // A queued run that ends frees a slot another run of its queue may be waiting for.
          if (deps.queues.length > 0) this.kick();
          if (parentRunId && (end === "completed" || end === "failed")) this.notify(parentRunId);
          if (end === "completed" || end === "failed") void deps.credentials?.settle(runId);
        },
      },
      options,
    );
    this.workers.add(worker);
    const retention = deps.retention && new RetentionScheduler(deps.store, deps.retention, deps.clock, deps.logger);
    const deadlines = new DeadlineSweeper(
      deps.store,
      deps.clock,
      (runId) => deps.cancel(runId, "deadline"),
      (error) => deps.logger.log("error", "deadline sweep failed; retrying at the next poll", { error: serializeError(error) }),
      deps.deadlinePollMs,
    );
    deps.schedules.startScheduler();
    const stop = worker.stop.bind(worker);
    worker.stop = async (opts) => {
      await Promise.all([retention?.stop(), deadlines.stop()]);
      await Promise.all([stop(opts), dispatcher?.stop(opts)]);
      this.workers.delete(worker);
      if (this.workers.size === 0) await deps.schedules.stopScheduler();
    };
    return worker;
  }

  startDispatcher(options?: DispatcherOptions): Dispatcher {
    const { store, clock, logger, outbox } = this.deps;
    const dispatcher = new DispatcherImpl({ store, clock, logger, registry: outbox }, options);
    this.dispatchers.add(dispatcher);
    const stop = dispatcher.stop.bind(dispatcher);
    dispatcher.stop = async (opts) => {
      await stop(opts);
      this.dispatchers.delete(dispatcher);
    };
    return dispatcher;
  }

  /**
   * A local worker with a free slot for `workflow`, and the claim to create the run with (so the worker
   * gets it in the creating transaction). The reservation must be settled with the worker's `adopt`.
   */
  reserve(workflow: { name: string; version: string }): { holder: WorkerImpl; claimFor: { workerId: string; leaseMs: number } } | undefined {
    for (const worker of this.workers) {
      const claimFor = worker.reserve(workflow);
      if (claimFor) return { holder: worker, claimFor };
    }
    return undefined;
  }

  /** Work may exist for anyone: every worker and dispatcher polls now. */
  kick(): void {
    for (const worker of this.workers) worker.kick();
    for (const dispatcher of this.dispatchers) dispatcher.kick();
  }

  /** Something arrived for a run (an event, an answer, a child's end): wake it where it runs, and poll. */
  notify(runId: string): void {
    for (const worker of this.workers) {
      worker.notify(runId);
      worker.kick();
    }
  }

  /** Dispatchers poll now (a dead message was re-queued). */
  kickDispatchers(): void {
    for (const dispatcher of this.dispatchers) dispatcher.kick();
  }

  /** Stops a run's local execution (it was cancelled). */
  abandon(runId: string, error: Error): void {
    for (const worker of this.workers) worker.abandonRun(runId, error);
  }

  /** Whether a worker of this engine is executing the run now (its end will be announced to {@link waitForChange}). */
  holds(runId: string): boolean {
    for (const worker of this.workers) if (worker.holds(runId)) return true;
    return false;
  }

  /** Wakes `result()` waiters of a run that ended here. */
  ended(runId: string): void {
    this.finished.emit(runId);
  }

  /**
   * Resolves when the run may have changed (it ended in this process), or after `ms`: with the
   * payload of the `run.completed` entry when its execution here completed it, so the caller
   * need not read it back.
   */
  waitForChange(runId: string, ms: number): Promise<string | undefined> {
    return new Promise((resolve) => {
      const done = (completed?: string) => {
        clearTimeout(timer);
        this.finished.off(runId, done);
        resolve(completed);
      };
      const timer = setTimeout(done, ms);
      this.finished.on(runId, done);
    });
  }

  /** Tells this engine's workers, now and later, that a version is drained (or not). */
  setDrained(workflow: string, version: string, drained: boolean): void {
    if (drained) this.drained.add(`${workflow}@${version}`);
    else this.drained.delete(`${workflow}@${version}`);
    for (const worker of this.workers) worker.setDrained(workflow, version, drained);
  }

  /** Stops every worker, letting in-flight work finish. */
  async stopWorkers(): Promise<void> {
    await Promise.all([...this.workers].map((w) => w.stop({ drain: true })));
  }

  /** Stops every dispatcher, letting in-flight deliveries finish. */
  async stopDispatchers(): Promise<void> {
    await Promise.all([...this.dispatchers].map((d) => d.stop({ drain: true })));
  }
}
