import { randomUUID } from "node:crypto";
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
import type { JournalCompaction } from "../core/compaction.js";
import type { CompactOptions, CompactResult, ExportOptions, ImportOptions, PruneOptions, PruneResult } from "../core/retention-schemas.js";
import { compact } from "./compaction.js";
import type { RunExport } from "../core/run-export.js";
import type { ReplayReport, JournalFile, VersionSummary } from "../core/deploys.js";
import { check } from "./check-input.js";
import type { Dispatcher, DispatcherOptions, OutboxHandler } from "./outbox.js";
import type { EventRegistry, EventDefinition } from "./define-event.js";
import type { PublishResult } from "./event-triggers.js";
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
import { StoreClock } from "./store-clock.js";
import { exportRun, importRun, prune } from "./retention.js";
import { toRunInfo } from "./run-views.js";
import { wireEngineServices, type EngineServices } from "./engine-services.js";
import { readPublished, type PublishedValue, type RequestOptions } from "./live-runs.js";
import type { Schedule, ScheduleInfo, ScheduleOptions } from "./schedule.js";
import type { QueueState } from "./queue-state.js";
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
  private readonly clock: () => number;
  private readonly s: EngineServices;
  private readonly unsubscribeWake: () => void;
  private readonly calibrateTimer: NodeJS.Timeout | null;
  private closed = false;

  constructor(
    readonly store: Store,
    workflows: WorkflowRegistry,
    storeClock: StoreClock,
    options: EngineOptions,
    queues: readonly QueueLimits[],
    events: EventRegistry,
  ) {
    const clock = (this.clock = storeClock.now);
    this.unsubscribeWake = store.onWake ? store.onWake(() => this.s.pool.kick()) : () => {};
    this.calibrateTimer = store.now ? setInterval(() => void storeClock.calibrate().catch(() => undefined), 30_000) : null;
    this.calibrateTimer?.unref();
    this.s = wireEngineServices(
      { store, workflows, clock, instanceId: this.instanceId, options, queues, events },
      {
        cancel: (runId, reason) => this.cancel(runId, reason),
        start: async (workflow, input, runId) => void (await this.start(workflow, input, { runId })),
        sendEvent: (runId, type, payload, opts) => this.sendEvent(runId, type, payload, opts),
      },
    );
  }

  async prune(options: PruneOptions): Promise<PruneResult> {
    this.ensureOpen();
    return prune(this.store, options, this.clock());
  }
  async compact(options: CompactOptions): Promise<CompactResult> {
    this.ensureOpen();
    return compact(this.store, options, this.clock());
  }
  async getCompaction(runId: string): Promise<JournalCompaction | undefined> {
    this.ensureOpen();
    return this.store.readCompaction(check(RUN_REF, runId, "getCompaction: runId"));
  }
  async exportRun(runId: string, options: ExportOptions = {}): Promise<RunExport> {
    this.ensureOpen();
    return exportRun(this.store, runId, options, this.clock());
  }
  async importRun(data: unknown, options: ImportOptions = {}): Promise<RunInfo> {
    this.ensureOpen();
    const run = await importRun(this.store, data, options);
    this.s.pool.kick();
    return toRunInfo(run);
  }
  schedule<I>(schedule: Schedule<I> | ScheduleOptions<I>): Promise<ScheduleInfo> {
    this.ensureOpen();
    return this.s.schedules.save(schedule as Schedule<unknown> | ScheduleOptions<unknown>);
  }
  pauseSchedule(name: string): Promise<ScheduleInfo> {
    this.ensureOpen();
    return this.s.schedules.setPaused(name, true);
  }
  resumeSchedule(name: string): Promise<ScheduleInfo> {
    this.ensureOpen();
    return this.s.schedules.setPaused(name, false);
  }
  deleteSchedule(name: string): Promise<void> {
    this.ensureOpen();
    return this.s.schedules.delete(name);
  }
  getSchedule(name: string): Promise<ScheduleInfo> {
    return this.s.schedules.get(name);
  }
  listSchedules(): Promise<ScheduleInfo[]> {
    return this.s.schedules.list();
  }
  observe(observer: EngineObserver): () => void {
    if (typeof observer !== "function") throw new ValidationError("observe: pass a function that takes an engine event.");
    return this.s.observers.add(observer);
  }
  async start<I, O>(workflow: Workflow<I, O> | string, input: I, options: StartOptions = {}): Promise<RunHandle<O>> {
    this.ensureOpen();
    const { runId, created } = await this.s.starter.start(workflow, input, options);
    return this.makeHandle<O>(runId, created);
  }
  handle<O = unknown>(runId: string): RunHandle<O> {
    return this.makeHandle<O>(check(RUN_REF, runId, "handle: runId"), false);
  }
  async sendEvent(runId: string, typeOrEvent: string | EventDefinition, payload?: unknown, options: { eventId?: string; secret?: boolean } = {}) {
    this.ensureOpen();
    return this.s.starter.sendEvent(runId, typeOrEvent, payload, options);
  }
  async publishEvent(typeOrEvent: string | EventDefinition, payload?: unknown, options: { eventId?: string } = {}): Promise<PublishResult> {
    this.ensureOpen();
    return this.s.starter.publishEvent(typeOrEvent, payload, options);
  }
  getRun(runId: string): Promise<RunInfo> {
    return this.s.views.getRun(runId);
  }
  getPublished<T = unknown>(runId: string, name: string): Promise<PublishedValue<T> | undefined> {
    return readPublished<T>(this.store, check(RUN_ID, runId, "getPublished: runId"), name);
  }
  request<R = unknown>(runId: string, name: string, payload?: unknown, options?: RequestOptions): Promise<R> {
    this.ensureOpen();
    return this.s.starter.request<R>(runId, name, payload, options);
  }
  countRuns(options: Omit<ListRunsOptions, "limit" | "cursor" | "previewBytes" | "maxBytes"> = {}) {
    this.ensureOpen();
    return this.s.views.countRuns(options);
  }
  listRuns(options: ListRunsOptions = {}) {
    return this.s.views.listRuns(options);
  }
  redact<T>(runId: string, value: T): Promise<T> {
    return this.s.views.redact(runId, value);
  }
  journal(runId: string, options: { afterSeq?: number; limit?: number; previewBytes?: number } = {}): Promise<JournalEntryView[]> {
    return this.s.views.journal(runId, options);
  }
  async cancel(runId: string, reason?: string): Promise<RunInfo> {
    this.ensureOpen();
    const info = await this.s.control.cancel(runId, reason);
    // A run cancelled without a worker (nothing to unwind) ends here: its credentials are revoked now.
    void this.s.credentials?.settle(runId);
    return info;
  }
  async retry(runId: string): Promise<RunInfo> {
    this.ensureOpen();
    return this.s.control.retry(runId);
  }
  async fork<O = unknown>(runId: string, options: ForkOptions): Promise<RunHandle<O>> {
    this.ensureOpen();
    const { runId: forkId, created } = await this.s.control.fork(runId, options);
    return this.makeHandle<O>(forkId, created);
  }
  result<O = unknown>(runId: string, options: { timeoutMs?: number } = {}): Promise<O> {
    return this.s.control.result<O>(runId, options);
  }
  async respondToHuman(requestId: string, answer: HumanAnswer): Promise<{ answer: HumanAnswer; duplicate: boolean }> {
    this.ensureOpen();
    return this.s.humans.respond(requestId, answer);
  }
  async listHumanRequests(options: ListHumanRequestsOptions = {}): Promise<HumanRequest[]> {
    return (await this.s.humans.listPage(options)).requests;
  }
  listHumanRequestPage(options: ListHumanRequestsOptions = {}) {
    return this.s.humans.listPage(options);
  }
  getHumanRequest(requestId: string): Promise<HumanRequest | undefined> {
    return this.s.humans.get(requestId);
  }
  async listQueues(): Promise<QueueState[]> {
    this.ensureOpen();
    return this.s.ops.listQueues();
  }
  queueStates(): Promise<QueueState[]> {
    return this.listQueues();
  }
  listWorkers(options: { staleAfterMs?: number } = {}) {
    return this.s.ops.listWorkers(options.staleAfterMs ?? 60_000);
  }
  listStuckRuns(options: { graceMs?: number; limit?: number } = {}): Promise<RunInfo[]> {
    return this.s.views.listStuckRuns(this.clock(), options);
  }
  listVersions(): Promise<VersionSummary[]> {
    return this.s.ops.listVersions();
  }
  async retireVersion(workflow: string, version: string): Promise<boolean> {
    this.ensureOpen();
    return this.s.ops.setRetired(workflow, version, true);
  }
  async reinstateVersion(workflow: string, version: string): Promise<boolean> {
    this.ensureOpen();
    return this.s.ops.setRetired(workflow, version, false);
  }
  drainVersion(workflow: string, version: string): Promise<boolean> {
    return this.retireVersion(workflow, version);
  }
  undrainVersion(workflow: string, version: string): Promise<boolean> {
    return this.reinstateVersion(workflow, version);
  }
  replay(source: string | JournalFile): Promise<ReplayReport> {
    this.ensureOpen();
    return this.s.ops.replay(source);
  }
  startDispatcher(options?: DispatcherOptions): Dispatcher {
    this.ensureOpen();
    return this.s.pool.startDispatcher(options);
  }
  onMessage<P = unknown>(topic: string, handler: OutboxHandler<P>): () => void {
    return this.s.outbox.add(topic, handler as OutboxHandler<any>);
  }
  listOutbox(query: ListOutboxQuery = {}): Promise<OutboxMessage[]> {
    return this.s.ops.listOutbox(query);
  }
  async retryOutboxMessage(messageId: string): Promise<{ message: OutboxMessage; applied: boolean }> {
    this.ensureOpen();
    return this.s.ops.retryOutboxMessage(messageId);
  }
  startWorker(options?: WorkerOptions): Worker {
    this.ensureOpen();
    return this.s.pool.startWorker(options);
  }
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.s.observers.report({ type: "engine-closing" });
    await this.s.pool.stopWorkers();
    await this.s.schedules.stopScheduler();
    await this.s.pool.stopDispatchers();
    this.unsubscribeWake();
    if (this.calibrateTimer) clearInterval(this.calibrateTimer);
    await this.s.livePublisher.close();
    await this.store.close();
  }
  private ensureOpen(): void {
    if (this.closed) throw new EngineClosedError();
  }
  private makeHandle<O>(runId: string, created: boolean): RunHandle<O> {
    return { runId, created, result: (options) => this.result<O>(runId, options), info: () => this.getRun(runId) };
  }
}
