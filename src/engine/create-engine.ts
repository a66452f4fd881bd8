import { randomUUID } from "node:crypto";
import { LiveDeltaPublisher } from "./live-publisher.js";
import { serializeError } from "../core/serialize.js";
import { EngineClosedError, ValidationError } from "../core/errors.js";
import type { HumanAnswer } from "../core/journal.js";
import { checkEngineOptions } from "./engine-options.js";
import { runIdSchema as RUN_ID, runIdRefSchema as RUN_REF } from "../core/schemas.js";
import type { HumanRequest, Store } from "../core/store.js";
import type { QueueLimits } from "../core/flow-control.js";
import { defaultStoreUrl, openStore } from "../store/open-store.js";
import { aesGcmCodecFromEnv } from "../store/payloads/aes-gcm-codec.js";
import { inlineLimitFromEnv, withPayloads } from "../store/payloads/payload-store.js";
import type { ListOutboxQuery, OutboxMessage } from "../core/outbox.js";
import type { ExportOptions, ImportOptions, PruneOptions, PruneResult } from "../core/retention-schemas.js";
import type { RunExport } from "../core/run-export.js";
import type { ReplayReport, JournalFile, VersionSummary } from "../core/deploys.js";
import { check } from "./check-input.js";
import { Committer } from "./committer.js";
import type { Dispatcher, DispatcherOptions, OutboxHandler } from "./outbox.js";
import { OutboxRegistry } from "./outbox-registry.js";
import type { EventRegistry, EventDefinition } from "./define-event.js";
import type { PublishResult } from "./event-triggers.js";
import { DEFAULT_MAX_RECOVERY_ATTEMPTS } from "./engine.js";
import type {
  Engine,
  EngineOptions,
  JournalEntryView,
  ListHumanRequestsOptions,
  ListRunsOptions,
  RunHandle,
  RunInfo,
  StartOptions,
  Worker,
  WorkerOptions,
} from "./engine.js";
import type { ForkOptions } from "./fork.js";
import type { EngineObserver } from "./observer.js";
import { EngineOperations } from "./engine-operations.js";
import { ObserverHub } from "./observer-hub.js";
import { CredentialBroker, credentialProviders } from "./credentials.js";
import { consoleLogger } from "./logger.js";
import { StoreClock } from "./store-clock.js";
import { exportRun, importRun, prune } from "./retention.js";
import { RunCreator } from "./run-creator.js";
import { RunStarter } from "./run-starter.js";
import { RunControl } from "./run-control.js";
import { RunViews, toRunInfo } from "./run-views.js";
import { HumanRequests } from "./human-requests.js";
import { readPublished, type PublishedValue, type RequestOptions } from "./live-runs.js";
import type { Schedule, ScheduleInfo, ScheduleOptions } from "./schedule.js";
import { ScheduleService } from "./schedule-service.js";
import type { QueueState } from "./queue-state.js";
import { SecretViews } from "./secret-views.js";
import { WorkerPool } from "./worker-pool.js";
import type { WorkflowRegistry } from "./workflow-registry.js";
import type { Workflow } from "./workflow.js";

/**
 * Opens a store and returns an engine for the given workflows.
 * @example
 * const engine = await createEngine({ store: "sqlite:.cairn/cairn.db", workflows: [research] });
 * const run = await engine.start(research, { topic: "batteries" }, { runId: "thread-42" });
 * const worker = engine.startWorker({ concurrency: 64 });
 * console.log(await run.result());
 * await worker.stop({ drain: true });
 */
export async function createEngine(options: EngineOptions = {}): Promise<Engine> {
  const { workflows, schedules, queues, events } = checkEngineOptions(options);
  // The environment is read before the store is opened, so a malformed variable leaks no connection.
  const codec = options.payloads?.codec !== undefined ? options.payloads.codec : aesGcmCodecFromEnv();
  const inlineLimit = options.payloads?.inlineLimit ?? inlineLimitFromEnv();
  const opened = typeof options.store === "object" && options.store !== null ? options.store : await openStore(options.store ?? defaultStoreUrl());
  const store = withPayloads(opened, { ...options.payloads, codec, ...(inlineLimit === undefined ? {} : { inlineLimit }) });
  const clock = new StoreClock(options.clock ?? Date.now, store);
  await clock.calibrate();
  const engine = new EngineImpl(store, workflows, clock, options, queues, events);
  for (const schedule of schedules) await engine.schedule(schedule);
  return engine;
}

/** The public {@link Engine}: checks it is open, then hands each call to the service that holds it. */
class EngineImpl implements Engine {
  readonly instanceId = randomUUID();
  /** This engine's workers' live deltas, for streams in other processes. */
  private readonly livePublisher: LiveDeltaPublisher;
  private readonly clock: () => number;
  private readonly outbox: OutboxRegistry;
  private readonly schedules: ScheduleService;
  private readonly observers: ObserverHub;
  private readonly credentials: CredentialBroker | undefined;
  private readonly pool: WorkerPool;
  private readonly views: RunViews;
  private readonly starter: RunStarter;
  private readonly control: RunControl;
  private readonly humans: HumanRequests;
  private readonly ops: EngineOperations;
  private readonly unsubscribeWake: () => void;
  private readonly calibrateTimer: NodeJS.Timeout | null;
  private closed = false;

  constructor(
    readonly store: Store,
    private readonly workflows: WorkflowRegistry,
    storeClock: StoreClock,
    options: EngineOptions,
    queues: readonly QueueLimits[],
    events: EventRegistry,
  ) {
    const clock = (this.clock = storeClock.now);
    this.unsubscribeWake = store.onWake ? store.onWake(() => this.pool.kick()) : () => {};
    this.calibrateTimer = store.now ? setInterval(() => void storeClock.calibrate().catch(() => undefined), 30_000) : null;
    this.calibrateTimer?.unref();
    const maxPayloadBytes = options.maxPayloadBytes ?? 4 * 1024 * 1024;
    const maxRecoveryAttempts = options.maxRecoveryAttempts ?? DEFAULT_MAX_RECOVERY_ATTEMPTS;
    const logger = options.logger ?? consoleLogger();
    const cancel = (runId: string, reason: string) => this.cancel(runId, reason);
    this.observers = new ObserverHub(logger, options.observer);
    this.livePublisher = new LiveDeltaPublisher(store, this.instanceId, clock, (error) =>
      logger.log("warn", "live deltas could not reach other processes' streams; their catch-up is resent", { error: serializeError(error) }),
    );
    const start = async (workflow: string, input: unknown, runId: string) => void (await this.start(workflow, input, { runId }));
    this.schedules = new ScheduleService(
      { store, clock, logger, start, workflowNames: () => workflows.names() },
      { enabled: options.scheduler?.enabled ?? true, pollMs: options.scheduler?.pollMs ?? 1000, leaseMs: options.scheduler?.leaseMs ?? 10_000 },
    );
    this.outbox = new OutboxRegistry(options.outbox);
    const providers = credentialProviders(options.credentials);
    this.credentials = providers.size > 0 ? new CredentialBroker(providers, store, clock, logger) : undefined;
    this.pool = new WorkerPool({
      ...(this.credentials ? { credentials: this.credentials } : {}),
      ...{ store, clock, logger, maxPayloadBytes, queues, cancel, outbox: this.outbox, observers: this.observers, schedules: this.schedules },
      committer: new Committer(store, clock),
      workflows: workflows.byKey,
      maxRecoveryAttempts: maxRecoveryAttempts === 0 ? undefined : maxRecoveryAttempts,
      retention: options.retention,
      deadlinePollMs: options.deadlines?.pollMs ?? 1000,
      live: this.livePublisher,
    });
    const views = (this.views = new RunViews(store, new SecretViews(store)));
    const pool = this.pool;
    const sendEvent = (runId: string, type: string, payload: unknown, opts: { eventId: string }) => this.sendEvent(runId, type, payload, opts);
    this.starter = new RunStarter({ store, clock, pool, workflows, queues, events, cancel, sendEvent, creator: new RunCreator(store, clock) });
    this.control = new RunControl({ store, clock, pool, views, workflows, maxPayloadBytes, cancel });
    this.ops = new EngineOperations({ store, clock, pool, workflows, queues });
    this.humans = new HumanRequests({ store, clock, views, observers: this.observers, notify: (runId) => pool.notify(runId) });
  }

  async prune(options: PruneOptions): Promise<PruneResult> {
    this.ensureOpen();
    return prune(this.store, options, this.clock());
  }
  async exportRun(runId: string, options: ExportOptions = {}): Promise<RunExport> {
    this.ensureOpen();
    return exportRun(this.store, runId, options, this.clock());
  }
  async importRun(data: unknown, options: ImportOptions = {}): Promise<RunInfo> {
    this.ensureOpen();
    const run = await importRun(this.store, data, options);
    this.pool.kick();
    return toRunInfo(run);
  }
  schedule<I>(schedule: Schedule<I> | ScheduleOptions<I>): Promise<ScheduleInfo> {
    this.ensureOpen();
    return this.schedules.save(schedule as Schedule<unknown> | ScheduleOptions<unknown>);
  }
  pauseSchedule(name: string): Promise<ScheduleInfo> {
    this.ensureOpen();
    return this.schedules.setPaused(name, true);
  }
  resumeSchedule(name: string): Promise<ScheduleInfo> {
    this.ensureOpen();
    return this.schedules.setPaused(name, false);
  }
  deleteSchedule(name: string): Promise<void> {
    this.ensureOpen();
    return this.schedules.delete(name);
  }
  getSchedule(name: string): Promise<ScheduleInfo> {
    return this.schedules.get(name);
  }
  listSchedules(): Promise<ScheduleInfo[]> {
    return this.schedules.list();
  }
  observe(observer: EngineObserver): () => void {
    if (typeof observer !== "function") throw new ValidationError("observe: pass a function that takes an engine event.");
    return this.observers.add(observer);
  }
  async start<I, O>(workflow: Workflow<I, O> | string, input: I, options: StartOptions = {}): Promise<RunHandle<O>> {
    this.ensureOpen();
    const { runId, created } = await this.starter.start(workflow, input, options);
    return this.makeHandle<O>(runId, created);
  }
  handle<O = unknown>(runId: string): RunHandle<O> {
    return this.makeHandle<O>(check(RUN_REF, runId, "handle: runId"), false);
  }
  async sendEvent(runId: string, typeOrEvent: string | EventDefinition, payload?: unknown, options: { eventId?: string; secret?: boolean } = {}) {
    this.ensureOpen();
    return this.starter.sendEvent(runId, typeOrEvent, payload, options);
  }
  async publishEvent(typeOrEvent: string | EventDefinition, payload?: unknown, options: { eventId?: string } = {}): Promise<PublishResult> {
    this.ensureOpen();
    return this.starter.publishEvent(typeOrEvent, payload, options);
  }
  getRun(runId: string): Promise<RunInfo> {
    return this.views.getRun(runId);
  }
  getPublished<T = unknown>(runId: string, name: string): Promise<PublishedValue<T> | undefined> {
    return readPublished<T>(this.store, check(RUN_ID, runId, "getPublished: runId"), name);
  }
  request<R = unknown>(runId: string, name: string, payload?: unknown, options?: RequestOptions): Promise<R> {
    this.ensureOpen();
    return this.starter.request<R>(runId, name, payload, options);
  }
  countRuns(options: Omit<ListRunsOptions, "limit" | "cursor" | "previewBytes" | "maxBytes"> = {}) {
    this.ensureOpen();
    return this.views.countRuns(options);
  }
  listRuns(options: ListRunsOptions = {}) {
    return this.views.listRuns(options);
  }
  redact<T>(runId: string, value: T): Promise<T> {
    return this.views.redact(runId, value);
  }
  journal(runId: string, options: { afterSeq?: number; limit?: number; previewBytes?: number } = {}): Promise<JournalEntryView[]> {
    return this.views.journal(runId, options);
  }
  async cancel(runId: string, reason?: string): Promise<RunInfo> {
    this.ensureOpen();
    const info = await this.control.cancel(runId, reason);
    // A run cancelled without a worker (nothing to unwind) ends here: its credentials are revoked now.
    void this.credentials?.settle(runId);
    return info;
  }
  async retry(runId: string): Promise<RunInfo> {
    this.ensureOpen();
    return this.control.retry(runId);
  }
  async fork<O = unknown>(runId: string, options: ForkOptions): Promise<RunHandle<O>> {
    this.ensureOpen();
    const { runId: forkId, created } = await this.control.fork(runId, options);
    return this.makeHandle<O>(forkId, created);
  }
  result<O = unknown>(runId: string, options: { timeoutMs?: number } = {}): Promise<O> {
    return this.control.result<O>(runId, options);
  }
  async respondToHuman(requestId: string, answer: HumanAnswer): Promise<{ answer: HumanAnswer; duplicate: boolean }> {
    this.ensureOpen();
    return this.humans.respond(requestId, answer);
  }
  async listHumanRequests(options: ListHumanRequestsOptions = {}): Promise<HumanRequest[]> {
    return (await this.humans.listPage(options)).requests;
  }
  listHumanRequestPage(options: ListHumanRequestsOptions = {}) {
    return this.humans.listPage(options);
  }
  getHumanRequest(requestId: string): Promise<HumanRequest | undefined> {
    return this.humans.get(requestId);
  }
  async listQueues(): Promise<QueueState[]> {
    this.ensureOpen();
    return this.ops.listQueues();
  }
  queueStates(): Promise<QueueState[]> {
    return this.listQueues();
  }
  listWorkers(options: { staleAfterMs?: number } = {}) {
    return this.ops.listWorkers(options.staleAfterMs ?? 60_000);
  }
  listStuckRuns(options: { graceMs?: number; limit?: number } = {}): Promise<RunInfo[]> {
    return this.views.listStuckRuns(this.clock(), options);
  }
  listVersions(): Promise<VersionSummary[]> {
    return this.ops.listVersions();
  }
  async retireVersion(workflow: string, version: string): Promise<boolean> {
    this.ensureOpen();
    return this.ops.setRetired(workflow, version, true);
  }
  async reinstateVersion(workflow: string, version: string): Promise<boolean> {
    this.ensureOpen();
    return this.ops.setRetired(workflow, version, false);
  }
  drainVersion(workflow: string, version: string): Promise<boolean> {
    return this.retireVersion(workflow, version);
  }
  undrainVersion(workflow: string, version: string): Promise<boolean> {
    return this.reinstateVersion(workflow, version);
  }
  replay(source: string | JournalFile): Promise<ReplayReport> {
    this.ensureOpen();
    return this.ops.replay(source);
  }
  startDispatcher(options?: DispatcherOptions): Dispatcher {
    this.ensureOpen();
    return this.pool.startDispatcher(options);
  }
  onMessage<P = unknown>(topic: string, handler: OutboxHandler<P>): () => void {
    return this.outbox.add(topic, handler as OutboxHandler<any>);
  }
  listOutbox(query: ListOutboxQuery = {}): Promise<OutboxMessage[]> {
    return this.ops.listOutbox(query);
  }
  async retryOutboxMessage(messageId: string): Promise<{ message: OutboxMessage; applied: boolean }> {
    this.ensureOpen();
    return this.ops.retryOutboxMessage(messageId);
  }
  startWorker(options?: WorkerOptions): Worker {
    this.ensureOpen();
    return this.pool.startWorker(options);
  }
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.observers.report({ type: "engine-closing" });
    await this.pool.stopWorkers();
    await this.schedules.stopScheduler();
    await this.pool.stopDispatchers();
    this.unsubscribeWake();
    if (this.calibrateTimer) clearInterval(this.calibrateTimer);
    await this.livePublisher.close();
    await this.store.close();
  }
  private ensureOpen(): void {
    if (this.closed) throw new EngineClosedError();
  }
  private makeHandle<O>(runId: string, created: boolean): RunHandle<O> {
    return { runId, created, result: (options) => this.result<O>(runId, options), info: () => this.getRun(runId) };
  }
}
