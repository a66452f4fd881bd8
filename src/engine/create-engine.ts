import { randomUUID } from "node:crypto";
import { EventEmitter } from "node:events";
import { z } from "zod";
import {
  CairnError,
  EngineClosedError,
  RunCancelledError,
  RunCompensatedError,
  CompensationFailedError,
  HumanRequestClosedError,
  HumanRequestNotFoundError,
  RunConflictError,
  RunFailedError,
  RunFinishedError,
  RunNotFailedError,
  RunNotFoundError,
  ValidationError,
  WorkflowNotRegisteredError,
  isCairnError,
} from "../core/errors.js";
import { REDACTED, type RunSecrets } from "../core/redact.js";
import { newEntry, type EntryData, type HumanAnswer, type WaitDescriptor } from "../core/journal.js";
import { isTerminal, type RunRecord } from "../core/run.js";
import {
  cancelReasonSchema,
  describeIssues,
  eventIdSchema,
  eventTypeSchema,
  humanAnswerSchema,
  requestIdSchema,
  runIdSchema as RUN_ID,
  runIdRefSchema as RUN_REF,
  runStatusSchema as statusSchema,
} from "../core/schemas.js";
import { forkBody, listHumanRequestsOptionsSchema } from "../core/api-schemas.js";
import { decodeCursor, encodeCursor } from "../store/common/list-query.js";
import { decode, decodeSecrets, encode, serializeError, type SerializedError } from "../core/serialize.js";
import type { CopiedEntry, HumanRequest, ListRunsQuery, Store } from "../core/store.js";
import { decodeOr, unreadableMessage } from "../core/unreadable.js";
import { countSearch, searchRuns } from "./run-search.js";
import { elidedSize, PREVIEW_BYTES } from "../core/payloads.js";
import { debounceSchema, parseQueues, resolveFlow, type QueueLimits } from "../core/flow-control.js";
import { defaultStoreUrl, openStore } from "../store/open-store.js";
import { aesGcmCodecFromEnv } from "../store/payloads/aes-gcm-codec.js";
import { inlineLimitFromEnv, withPayloads } from "../store/payloads/payload-store.js";
import { listOutboxLibraryQuerySchema, type ListOutboxQuery, type OutboxMessage } from "../core/outbox.js";
import { Committer } from "./committer.js";
import { DispatcherImpl } from "./dispatcher.js";
import type { Dispatcher, DispatcherOptions, OutboxHandler } from "./outbox.js";
import { OutboxRegistry } from "./outbox-registry.js";
import type { ReplayReport, JournalFile, VersionSummary } from "../core/deploys.js";
import { replayRun, summarizeVersions } from "./deploys.js";
import { isWorkflow } from "./define-workflow.js";
import { EventRegistry, eventName, type EventDefinition } from "./define-event.js";
import { publish, type PublishResult } from "./event-triggers.js";
import { COUNT_SCAN_LIMIT, DEFAULT_MAX_RECOVERY_ATTEMPTS } from "./engine.js";
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
import { planFork, type ForkOptions } from "./fork.js";
import { needsCleanup } from "./saga.js";
import type { EngineEvent, EngineObserver, StepAttempt } from "./observer.js";
import { consoleLogger } from "./logger.js";
import { checkAnswerValue } from "./ask-human.js";
import { StoreClock } from "./store-clock.js";
import { exportRun, importRun, parsePolicy, prune, RetentionScheduler } from "./retention.js";
import type { ExportOptions, ImportOptions, PruneOptions, PruneResult, RetentionPolicy } from "../core/retention-schemas.js";
import type { RunExport } from "../core/run-export.js";
import { RunCreator } from "./run-creator.js";
import { DeadlineSweeper, readPublished, runLinks, sendRequest, startExtras, type PublishedValue, type RequestOptions } from "./live-runs.js";
import { followChain } from "./live-ops.js";
import { checkTags } from "../core/tags.js";
import type { Schedule, ScheduleInfo, ScheduleOptions } from "./schedule.js";
import { ScheduleService } from "./schedule-service.js";
import { queueStates, type QueueState } from "./queue-state.js";
import { WorkerImpl } from "./worker.js";
import { SecretViews } from "./secret-views.js";
import { secret } from "../core/secret.js";
import type { Workflow } from "./workflow.js";

/** An answer must fit its request: one of its options, or its recovery actions. */
function checkAnswerFits(request: HumanRequest, answer: HumanAnswer): void {
  const recovery = request.options.length > 0 && request.options.every((option) => option === "retry" || option === "skip" || option === "fail");
  if (answer.action === "answer") {
    if (recovery) throw new ValidationError(`Human request "${request.requestId}" asks whether a step happened: answer retry, skip or fail.`);
    if (request.options.length > 0 && (answer.option === undefined || !request.options.includes(answer.option))) {
      throw new ValidationError(
        `Human request "${request.requestId}" takes one of these options: ${request.options.join(", ")} (got ${answer.option === undefined ? "none" : JSON.stringify(answer.option)}).`,
      );
    }
  } else if (!recovery) {
    throw new ValidationError(
      `Human request "${request.requestId}" was asked with ctx.askHuman: answer with action "answer"${request.options.length > 0 ? ` and an option (${request.options.join(", ")})` : ""}.`,
    );
  }
}

const schedulerOptions = z
  .object({
    enabled: z.boolean().optional(),
    pollMs: z.number().int().min(10).max(60_000).optional(),
    leaseMs: z.number().int().min(100).max(3_600_000).optional(),
  })
  .strict();

function check<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    throw new ValidationError(`${what}: ${describeIssues(parsed.error)}`);
  }
  return parsed.data;
}

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
  const workflows = new Map<string, Workflow<any, any>>();
  for (const [i, workflow] of (options.workflows ?? []).entries()) {
    if (!isWorkflow(workflow)) throw new ValidationError(`createEngine: workflows[${i}] is not a workflow; make it with defineWorkflow().`);
    workflows.set(`${workflow.name}@${workflow.version}`, workflow);
  }
  if (options.maxPayloadBytes !== undefined) check(z.number().int().positive(), options.maxPayloadBytes, "createEngine: maxPayloadBytes");
  if (options.retention !== undefined) parsePolicy(options.retention);
  const workflowNames = [...new Set([...workflows.values()].map((w) => w.name))];
  const schedules = ScheduleService.check(options.schedules ?? [], workflowNames);
  if (options.scheduler !== undefined) check(schedulerOptions, options.scheduler, "createEngine: scheduler");
  const queues = parseQueues(options.queues);
  const events = new EventRegistry(options.events ?? []);
  for (const workflow of workflows.values()) for (const event of workflow.events ?? []) events.add(event);
  for (const workflow of workflows.values()) {
    if (workflow.queue !== undefined && !queues.some((q) => q.name === workflow.queue)) {
      throw new ValidationError(
        `createEngine: workflow "${workflow.name}" joins queue "${workflow.queue}", which is not declared; add it to createEngine({ queues }).`,
      );
    }
  }
  if (options.maxRecoveryAttempts !== undefined) check(z.number().int().min(0).max(1000), options.maxRecoveryAttempts, "createEngine: maxRecoveryAttempts");
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

class EngineImpl implements Engine {
  private readonly clock: () => number;
  private readonly outbox: OutboxRegistry;
  private readonly dispatchers = new Set<DispatcherImpl>();
  private readonly committer: Committer;
  private readonly creator: RunCreator;
  private readonly schedules: ScheduleService;
  private readonly unsubscribeWake: () => void;
  private readonly calibrateTimer: NodeJS.Timeout | null;
  private readonly workers = new Set<WorkerImpl>();
  private readonly finished = new EventEmitter();
  private readonly maxPayloadBytes: number;
  private readonly maxRecoveryAttempts: number | undefined;
  /** Versions this engine drained or undrained last, so its new workers know before reading the store. */
  private readonly drained = new Set<string>();
  private readonly logger;
  private closed = false;
  private readonly retention: RetentionPolicy | undefined;
  /** How often each worker's deadline sweeper looks for due deadlines (`createEngine({ deadlines })`). */
  private readonly deadlinePollMs: number;
  private readonly observers = new Set<EngineObserver>();
  /** Redaction of run views (rows, journal, human requests); never touched by workers. */
  private readonly secrets: SecretViews;
  /** Bound once; undefined while nobody observes. */
  private readonly emitEvent = (event: EngineEvent): void => {
    for (const observer of this.observers) {
      try {
        observer(event);
      } catch (error) {
        this.logger.log("warn", "an engine observer threw; the event is dropped for it", { type: event.type, error: serializeError(error) });
      }
    }
  };

  /** The observers' `aroundStep` wrappers composed (outermost first); undefined while none has one. */
  private aroundStep: (<T>(step: StepAttempt, run: () => T) => T) | undefined;

  private refreshAroundStep(): void {
    const wrappers = [...this.observers].flatMap((observer) => (observer.aroundStep ? [observer.aroundStep] : []));
    this.aroundStep =
      wrappers.length === 0
        ? undefined
        : <T>(step: StepAttempt, run: () => T): T => wrappers.reduceRight<() => T>((inner, wrap) => () => this.wrapSafely(wrap, step, inner), run)();
  }

  /** A wrapper that throws before running the step is logged and skipped: the step still runs, once. */
  private wrapSafely<T>(wrap: NonNullable<EngineObserver["aroundStep"]>, step: StepAttempt, run: () => T): T {
    let ran = false;
    try {
      return wrap(step, () => {
        ran = true;
        return run();
      });
    } catch (error) {
      if (ran) throw error;
      this.logger.log("warn", "an engine observer's aroundStep threw; the step runs without it", { opKey: step.opKey, error: serializeError(error) });
      return run();
    }
  }

  constructor(
    readonly store: Store,
    private readonly workflows: Map<string, Workflow<any, any>>,
    storeClock: StoreClock,
    options: EngineOptions,
    private readonly queues: readonly QueueLimits[],
    private readonly events: EventRegistry,
  ) {
    this.clock = storeClock.now;
    this.unsubscribeWake = store.onWake ? store.onWake(() => this.kickWorkers()) : () => {};
    this.calibrateTimer = store.now ? setInterval(() => void storeClock.calibrate().catch(() => undefined), 30_000) : null;
    this.calibrateTimer?.unref();
    this.committer = new Committer(store, this.clock);
    this.creator = new RunCreator(store, this.clock);
    this.secrets = new SecretViews(store);
    this.maxPayloadBytes = options.maxPayloadBytes ?? 4 * 1024 * 1024;
    const maxRecoveryAttempts = options.maxRecoveryAttempts ?? DEFAULT_MAX_RECOVERY_ATTEMPTS;
    this.maxRecoveryAttempts = maxRecoveryAttempts === 0 ? undefined : maxRecoveryAttempts;
    this.logger = options.logger ?? consoleLogger();
    this.finished.setMaxListeners(0);
    if (options.observer) this.observers.add(options.observer);
    this.refreshAroundStep();
    this.retention = options.retention;
    this.deadlinePollMs = options.deadlines?.pollMs ?? 1000;
    this.schedules = new ScheduleService(
      {
        store,
        clock: this.clock,
        logger: this.logger,
        workflowNames: () => [...new Set([...workflows.values()].map((w) => w.name))],
        start: async (workflow, input, runId) => void (await this.start(workflow, input, { runId })),
      },
      { enabled: options.scheduler?.enabled ?? true, pollMs: options.scheduler?.pollMs ?? 1000, leaseMs: options.scheduler?.leaseMs ?? 10_000 },
    );
    this.outbox = new OutboxRegistry(options.outbox);
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
    this.kickWorkers();
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
    // A wrapper per call, so adding the same function twice gives two independent subscriptions.
    const entry: EngineObserver = (event) => observer(event);
    if (observer.aroundStep) entry.aroundStep = observer.aroundStep;
    this.observers.add(entry);
    this.refreshAroundStep();
    return () => {
      this.observers.delete(entry);
      this.refreshAroundStep();
    };
  }

  async start<I, O>(workflow: Workflow<I, O> | string, input: I, options: StartOptions = {}): Promise<RunHandle<O>> {
    this.ensureOpen();
    const definition = this.resolveWorkflow(workflow);
    const runId = options.runId === undefined ? randomUUID() : check(RUN_ID, options.runId, "start: runId");
    let encoded: string;
    try {
      encoded = encode(input);
    } catch (error) {
      throw new ValidationError(`start: input cannot be stored: ${(error as Error).message}`);
    }
    const flow = resolveFlow(options, definition.queue, this.queues, "start");
    const extras = startExtras(options, this.clock());
    if (options.debounce !== undefined) {
      if (options.runId !== undefined) throw new ValidationError("start: runId and debounce do not go together: a debounced start may join a run that exists.");
      const debounce = check(debounceSchema, options.debounce, "start: debounce");
      const now = this.clock();
      const newRun = { runId, workflow: definition.name, version: definition.version, input: encoded, ...(flow ? { flow } : {}) };
      const { run, created } = await this.store.debounceRun(newRun, debounce.key, now + debounce.period, now);
      return this.makeHandle<O>(run.runId, created);
    }
    // A local worker with a free slot gets the run at creation, in the same transaction; a queued
    // run waits for a claim, which checks its queue's limits.
    let holder: WorkerImpl | undefined;
    let claimFor: { workerId: string; leaseMs: number } | undefined;
    for (const worker of flow || extras.startAt !== undefined ? [] : this.workers) {
      claimFor = worker.reserve(definition);
      if (claimFor) {
        holder = worker;
        break;
      }
    }
    let result: Awaited<ReturnType<RunCreator["create"]>>;
    try {
      const extra = flow ? { flow } : claimFor ? { claimFor } : {};
      result = await this.creator.create({ runId, workflow: definition.name, version: definition.version, input: encoded, ...extra, ...extras });
    } catch (error) {
      holder?.adopt(undefined);
      throw error;
    }
    const { run, created } = result;
    holder?.adopt(created ? run : undefined);
    if (!created) {
      if (run.workflow !== definition.name) throw new RunConflictError(runId, `for workflow "${run.workflow}", not "${definition.name}"`);
      if (run.input !== encoded) throw new RunConflictError(runId, "with a different input");
    }
    if (!holder) this.kickWorkers();
    return this.makeHandle<O>(runId, created);
  }

  handle<O = unknown>(runId: string): RunHandle<O> {
    return this.makeHandle<O>(check(RUN_REF, runId, "handle: runId"), false);
  }

  async sendEvent(
    runId: string,
    typeOrEvent: string | EventDefinition,
    payload?: unknown,
    options: { eventId?: string; secret?: boolean } = {},
  ): Promise<{ eventId: string; duplicate: boolean }> {
    this.ensureOpen();
    check(RUN_REF, runId, "sendEvent: runId");
    const type = check(eventTypeSchema, eventName(typeOrEvent), "sendEvent: type");
    const eventId = options.eventId === undefined ? randomUUID() : check(eventIdSchema, options.eventId, "sendEvent: eventId");
    payload = this.events.check(typeOrEvent, payload);
    let encoded: string;
    try {
      encoded = encode(options.secret ? secret(payload) : payload);
    } catch (error) {
      throw new ValidationError(`sendEvent: payload cannot be stored: ${(error as Error).message}`);
    }
    const { duplicate } = await this.store.sendEvent({ runId, type, eventId, payload: encoded }, this.clock());
    if (!duplicate) this.notifyWorkers(runId);
    return { eventId, duplicate };
  }

  async publishEvent(typeOrEvent: string | EventDefinition, payload?: unknown, options: { eventId?: string } = {}): Promise<PublishResult> {
    this.ensureOpen();
    const type = check(eventTypeSchema, eventName(typeOrEvent), "publishEvent: type");
    const eventId = options.eventId === undefined ? randomUUID() : check(eventIdSchema, options.eventId, "publishEvent: eventId");
    const checked = this.events.check(typeOrEvent, payload);
    try {
      encode(checked);
    } catch (error) {
      throw new ValidationError(`publishEvent: payload cannot be stored: ${(error as Error).message}`);
    }
    const result = await publish(
      {
        store: this.store,
        clock: this.clock,
        workflows: () => [...new Map([...this.workflows.values()].map((w) => [w.name, w])).values()],
        flowOf: (w) => resolveFlow({}, w.queue, this.queues, "publishEvent"),
        cancel: (runId, reason) =>
          this.cancel(runId, reason).then(
            () => true,
            (error: unknown) => (error instanceof RunFinishedError ? false : Promise.reject(error)),
          ),
      },
      type,
      checked,
      eventId,
    );
    if (result.runs.some((r) => r.created)) this.kickWorkers();
    return result;
  }

  async getRun(runId: string): Promise<RunInfo> {
    const run = await this.requireRun(runId);
    return Object.assign(await this.view(run), await runLinks(this.store, run));
  }

  getPublished<T = unknown>(runId: string, name: string): Promise<PublishedValue<T> | undefined> {
    return readPublished<T>(this.store, check(RUN_ID, runId, "getPublished: runId"), name);
  }

  request<R = unknown>(runId: string, name: string, payload?: unknown, options?: RequestOptions): Promise<R> {
    this.ensureOpen();
    const deps = {
      store: this.store,
      clock: this.clock,
      sendEvent: (id: string, type: string, body: unknown, opts: { eventId: string }) => this.sendEvent(id, type, body, opts),
      waitForChange: (id: string, ms: number) => this.waitForChange(id, ms),
    };
    return sendRequest<R>(deps, check(RUN_ID, runId, "request: runId"), name, payload, options);
  }

  /** A run row as views show it: secrets redacted (see core/redact.ts). */
  private async view(run: RunRecord, previewBytes?: number): Promise<RunInfo> {
    const facts = await this.secrets.of(run.runId);
    const elided = previewBytes === undefined ? undefined : elidedPayloads(run, previewBytes);
    const info = toRunInfo(elided ? { ...run, ...(elided.input ? { input: "null" } : {}), ...(elided.output ? { output: "null" } : {}) } : run, facts);
    if (elided) info.elided = elided;
    if (facts.forkedFrom) info.forkedFrom = facts.forkedFrom;
    return info;
  }

  async listRuns(options: ListRunsOptions = {}): Promise<{ runs: RunInfo[]; nextCursor?: string }> {
    const query = this.runQuery(options);
    // One undecodable row is shown as a placeholder; the rest of the page is unaffected.
    const view = (run: RunRecord) => this.view(run, options.previewBytes).catch((error: unknown) => unreadableRun(run, error));
    // A text search matches what views show (secrets redacted), never the stored text.
    if (query.q !== undefined) return capBytes(await searchRuns(this.store, { ...query, q: query.q }, view), options.maxBytes);
    const page = await this.store.listRuns(query);
    // A preview page reads each run's journal (for its secrets) one run at a time, to bound memory.
    const runs: RunInfo[] = [];
    if (options.previewBytes === undefined) runs.push(...(await Promise.all(page.runs.map(view))));
    else for (const run of page.runs) runs.push(await view(run));
    return capBytes({ runs, ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) }, options.maxBytes);
  }

  async countRuns(options: Omit<ListRunsOptions, "limit" | "cursor" | "previewBytes" | "maxBytes"> = {}): Promise<{ total: number; exact: boolean }> {
    const { limit: _limit, cursor: _cursor, ...query } = this.runQuery(options);
    if (query.q === undefined) {
      const groups = await this.store.countRuns(query);
      return { total: groups.reduce((sum, group) => sum + group.count, 0), exact: true };
    }
    const view = (run: RunRecord) => this.view(run, PREVIEW_BYTES).catch((error: unknown) => unreadableRun(run, error));
    return countSearch(this.store, { ...query, q: query.q }, view, COUNT_SCAN_LIMIT);
  }

  /** The store query of a listing's options, checked. */
  private runQuery(options: ListRunsOptions): ListRunsQuery {
    const statuses = options.status === undefined ? undefined : check(z.array(statusSchema), [options.status].flat(), "listRuns: status");
    const limit = options.limit === undefined ? undefined : check(z.number().int().min(1).max(1000), options.limit, "listRuns: limit");
    const query = {
      status: statuses,
      workflow: options.workflow,
      ...(options.runIdPrefix === undefined ? {} : { runIdPrefix: check(z.string().max(1000), options.runIdPrefix, "listRuns: runIdPrefix") }),
      ...(options.q === undefined || options.q === "" ? {} : { q: check(z.string().max(200), options.q, "listRuns: q") }),
      createdAfter: options.createdAfter === undefined ? undefined : +options.createdAfter,
      createdBefore: options.createdBefore === undefined ? undefined : +options.createdBefore,
      ...(options.tags === undefined ? {} : { tags: checkTags(options.tags, "listRuns") }),
      ...(options.topLevel === true ? { parentRunId: null } : {}),
      limit,
      cursor: options.cursor,
      ...(options.previewBytes === undefined ? {} : { previewBytes: options.previewBytes }),
    };
    return Object.fromEntries(Object.entries(query).filter(([, value]) => value !== undefined)) as ListRunsQuery;
  }

  async redact<T>(runId: string, value: T): Promise<T> {
    return (await this.secrets.of(check(RUN_REF, runId, "redact: runId"))).value(value);
  }

  async journal(runId: string, options: { afterSeq?: number; limit?: number; previewBytes?: number } = {}): Promise<JournalEntryView[]> {
    await this.requireRun(runId);
    const entries = await this.store.readJournal(runId, options);
    // Read after the entries, so the run's secrets include every one of them.
    const secrets = await this.secrets.of(runId);
    return entries.map((e) => {
      const view: JournalEntryView = { seq: e.seq, kind: e.kind, opKey: e.opKey, data: null, epoch: e.epoch, at: new Date(e.at) };
      const elided = options.previewBytes === undefined ? undefined : elidedSize(e.payload, options.previewBytes);
      if (elided !== undefined) return { ...view, elided };
      view.data = decodeOr(
        () => secrets.entryData(e.kind, e.payload),
        null,
        `run "${runId}" journal seq ${e.seq}`,
        (m) => (view.unreadable = m),
      );
      return view;
    });
  }

  async cancel(runId: string, reason?: string): Promise<RunInfo> {
    this.ensureOpen();
    check(RUN_REF, runId, "cancel: runId");
    const data = reason === undefined ? {} : { reason: check(cancelReasonSchema, reason, "cancel: reason") };
    const live = ["pending", "running", "suspended"] as const;
    // A run with compensations to run or resources to release is handed back to a worker to clean up (engine/saga.ts).
    const before = await this.store.readJournal(runId);
    const cleanup = needsCleanup(before);
    const control = await this.store.controlRun(runId, live, newEntry(cleanup ? "run.cancelling" : "run.cancelled", null, data), this.clock());
    if (!control.applied) throw new RunFinishedError(runId, control.run.status, "cancel");
    let run = control.run;
    if (!cleanup && needsCleanup(await this.store.readJournal(runId, { afterSeq: before.at(-1)?.seq ?? 0 }))) {
      // The run registered a cleanup between the read and the cancel (the cancel fenced it out): reopen it to clean up.
      ({ run } = await this.store.controlRun(runId, ["cancelled"], newEntry("run.cancelling", null, data), this.clock()));
    }
    for (const worker of this.workers) worker.abandonRun(runId, new RunCancelledError(runId, reason));
    await this.cancelChildren(runId, reason);
    if (run.status === "pending") this.kickWorkers();
    else this.finished.emit(runId);
    return this.view(run);
  }

  private async cancelChildren(runId: string, reason: string | undefined): Promise<void> {
    let cursor: string | undefined;
    do {
      const page = await this.store.listRuns({ parentRunId: runId, status: ["pending", "running", "suspended"], limit: 1000, cursor });
      for (const child of page.runs) {
        await this.cancel(child.runId, reason ?? `parent ${runId} cancelled`).catch((error) => {
          if (!(error instanceof RunFinishedError)) throw error;
        });
      }
      cursor = page.nextCursor;
    } while (cursor);
  }

  async retry(runId: string): Promise<RunInfo> {
    this.ensureOpen();
    check(RUN_REF, runId, "retry: runId");
    const journal = await this.store.readJournal(runId);
    const failedSteps = [...new Set(journal.filter((e) => e.kind === "step.failed" && decode<{ final: boolean }>(e.payload).final).map((e) => e.opKey!))];
    // A compensation_failed run retries its failed compensation (and then the older ones), not its steps;
    // a dead run is claimed again with its recovery counter reset.
    const { run, applied } = await this.store.controlRun(
      runId,
      ["failed", "compensation_failed", "dead"],
      newEntry("run.retried", null, { failedSteps }),
      this.clock(),
    );
    if (!applied) throw new RunNotFailedError(runId, run.status);
    this.kickWorkers();
    return this.view(run);
  }

  async fork<O = unknown>(runId: string, options: ForkOptions): Promise<RunHandle<O>> {
    this.ensureOpen();
    check(RUN_REF, runId, "fork: runId");
    const parsed = check(forkBody, options, "fork: options");
    const source = await this.requireRun(runId);
    const journal = await this.store.readJournal(runId, { limit: parsed.atSeq });
    const patch = parsed.patch ? { seq: parsed.patch.seq, result: parsed.patch.result ?? null } : undefined;
    const readAfter = (seq: number) => this.store.readJournal(runId, { afterSeq: seq });
    // The fork continues under current code: the version this engine runs for the workflow now.
    const version = this.currentVersion(source.workflow) ?? source.version;
    const plan = await planFork(source, journal, readAfter, { atSeq: parsed.atSeq, version, ...(patch ? { patch } : {}) }, this.clock(), this.maxPayloadBytes);
    const forkId = parsed.runId ?? randomUUID();
    const newRun = { runId: forkId, workflow: source.workflow, version, input: source.input };
    const { run, created } = await this.store.createRunWithJournal(newRun, plan.copies, this.clock());
    if (!created) await this.checkSameFork(run, plan.forked, plan.copies);
    else this.kickWorkers();
    return this.makeHandle<O>(forkId, created);
  }

  /** A fork with a taken runId is the same fork (a retried request) only if it forked the same run at the same place. */
  private async checkSameFork(run: RunRecord, forked: EntryData["run.forked"], copies: readonly CopiedEntry[]): Promise<void> {
    const [marker] = await this.store.readJournal(run.runId, { afterSeq: forked.atSeq, limit: 1 });
    const same = marker?.kind === "run.forked" && marker.payload === encode(forked);
    const patched = forked.patchedSeq === undefined ? undefined : copies[forked.patchedSeq - 2]?.payload;
    const samePatch =
      patched === undefined || (await this.store.readJournal(run.runId, { afterSeq: forked.patchedSeq! - 1, limit: 1 }))[0]?.payload === patched;
    if (!same || !samePatch) throw new RunConflictError(run.runId, `and is not this fork of "${forked.fromRunId}" at seq ${forked.atSeq}`);
  }

  async result<O = unknown>(runId: string, options: { timeoutMs?: number } = {}): Promise<O> {
    check(RUN_REF, runId, "result: runId");
    const deadline = options.timeoutMs === undefined ? Infinity : Date.now() + options.timeoutMs;
    for (;;) {
      let run = await this.requireRun(runId);
      // A run that continued as new: the result is its chain's last run's.
      if (run.status === "completed") run = await followChain(this.store, run);
      if (run.status === "completed") return decode<O>(run.output);
      if (run.status === "failed" || run.status === "dead") throw new RunFailedError(runId, decode<SerializedError>(run.error));
      if (run.status === "cancelled") throw new RunCancelledError(runId, (decode<SerializedError>(run.error)?.data as { reason?: string } | undefined)?.reason);
      if (run.status === "compensated") throw new RunCompensatedError(runId, decode<SerializedError>(run.error) ?? { name: "Error", message: "compensated" });
      if (run.status === "compensation_failed") {
        throw new CompensationFailedError(runId, decode<SerializedError>(run.error) ?? { name: "Error", message: "compensation failed" });
      }
      const left = deadline - Date.now();
      if (left <= 0) throw new CairnError("TIMEOUT", `Run "${runId}" is still ${run.status} after ${options.timeoutMs}ms.`);
      await this.waitForChange(run.runId, Math.min(left, 100));
    }
  }

  private waitForChange(runId: string, ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.finished.off(runId, done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.finished.on(runId, done);
    });
  }

  async respondToHuman(requestId: string, answer: HumanAnswer): Promise<{ answer: HumanAnswer; duplicate: boolean }> {
    this.ensureOpen();
    check(requestIdSchema, requestId, "respondToHuman: requestId");
    const parsed = check(humanAnswerSchema, answer, "respondToHuman: answer") as HumanAnswer;
    const request = await this.store.getHumanRequest(requestId);
    if (!request) throw new HumanRequestNotFoundError(requestId);
    // Answering twice is a no-op that returns the first answer.
    if (request.status === "answered" && request.answer !== null) return { answer: decode<HumanAnswer>(request.answer), duplicate: true };
    if (request.status === "closed") throw new HumanRequestClosedError(requestId, request.closedReason ?? "finished");
    try {
      encode(parsed);
    } catch (error) {
      // e.g. a value nested thousands of levels deep: refused like a start or event payload, nothing written.
      throw new ValidationError(`respondToHuman: the answer to "${requestId}" cannot be stored: ${(error as Error).message}`);
    }
    checkAnswerFits(request, parsed);
    if (parsed.action === "answer" || parsed.action === "skip") await this.checkAnswerInput(request, parsed);
    const now = this.clock();
    try {
      await this.store.answerHuman(requestId, parsed, now);
    } catch (error) {
      if (!isCairnError(error, "HUMAN_REQUEST_ANSWERED")) throw error;
      // Someone else answered between the read and the write: theirs stands.
      const first = await this.store.getHumanRequest(requestId);
      if (first?.answer) return { answer: decode<HumanAnswer>(first.answer), duplicate: true };
      throw error;
    }
    this.notifyWorkers(request.runId);
    if (this.observers.size > 0) this.emitEvent({ type: "human-answered", runId: request.runId, requestId, waitMs: Math.max(0, now - request.createdAt) });
    return { answer: parsed, duplicate: false };
  }

  /** An answer's value must match the input schema the request was asked with (journaled with it). */
  private async checkAnswerInput(request: HumanRequest, answer: HumanAnswer): Promise<void> {
    // A pending request's op has not finished, so its entry is never superseded by a loop checkpoint.
    const journal = await this.store.readJournalForResume(request.runId);
    for (const entry of journal) {
      if (entry.kind !== "human.requested" || entry.opKey !== request.opKey) continue;
      const data = decode<{ requestId: string; input?: Record<string, unknown> }>(entry.payload);
      if (data.requestId !== request.requestId || !data.input) continue;
      // A step that declares its result's schema cannot be skipped without the result it would have returned.
      if (answer.action === "skip" && answer.value === undefined)
        throw new ValidationError(
          `Human request "${request.requestId}": skip means "it happened", so give the result it returned (--value '<json>' in the CLI, "value" in the API); the run continues with that value. Answer retry or fail otherwise.`,
        );
      checkAnswerValue(request.requestId, data.input, answer.value);
    }
  }

  async listHumanRequests(options: ListHumanRequestsOptions = {}): Promise<HumanRequest[]> {
    return (await this.listHumanRequestPage(options)).requests;
  }

  async listHumanRequestPage(options: ListHumanRequestsOptions = {}): Promise<{ requests: HumanRequest[]; nextCursor?: string }> {
    const query = check(listHumanRequestsOptionsSchema, options, "listHumanRequests");
    const limit = query.limit ?? 1000;
    const order = query.order ?? (query.status === undefined || query.status === "pending" ? "asc" : "desc");
    const cursor = query.cursor === undefined ? undefined : decodeCursor(query.cursor, "start from the first request");
    const rows = await this.store.listHumanRequests({
      ...(query.status === undefined ? {} : { status: query.status }),
      ...(query.runId === undefined ? {} : { runId: query.runId }),
      ...(query.runIdPrefix === undefined ? {} : { runIdPrefix: query.runIdPrefix }),
      ...(cursor === undefined ? {} : { after: { createdAt: cursor.createdAt, requestId: cursor.runId } }),
      order,
      limit: limit + 1,
    });
    const requests = await Promise.all(
      rows.slice(0, limit).map((request) => this.humanView(request).catch((error: unknown) => unreadableHuman(request, error))),
    );
    const last = rows.length > limit ? rows[limit - 1] : undefined;
    return last ? { requests, nextCursor: encodeCursor({ createdAt: last.createdAt, runId: last.requestId }) } : { requests };
  }

  async getHumanRequest(requestId: string): Promise<HumanRequest | undefined> {
    const request = await this.store.getHumanRequest(check(requestIdSchema, requestId, "getHumanRequest: requestId"));
    return request && this.humanView(request);
  }

  /** A human request as views show it: its question, context and (for a secret request) answer redacted. */
  private async humanView(request: HumanRequest): Promise<HumanRequest> {
    const secrets = await this.secrets.of(request.runId);
    if (!secrets.empty || request.context?.includes("$cairn") || request.answer?.includes("$cairn")) {
      const answer = request.answer === null ? null : secrets.decode<HumanAnswer>(request.answer);
      const view: HumanRequest = {
        ...request,
        question: secrets.value(request.question),
        answer: answer === null ? null : encode(secrets.isSecretRequest(request.requestId) ? secrets.answer(answer) : answer),
      };
      if (request.context !== undefined) view.context = encode(secrets.decode(request.context));
      return view;
    }
    return request;
  }

  async queueStates(): Promise<QueueState[]> {
    this.ensureOpen();
    return queueStates(await this.store.queueStats(this.clock()), this.queues);
  }

  listWorkers(options: { staleAfterMs?: number } = {}) {
    return this.store.listWorkers(this.clock() - (options.staleAfterMs ?? 60_000));
  }

  async listStuckRuns(options: { graceMs?: number; limit?: number } = {}): Promise<RunInfo[]> {
    const runs = await this.store.listStuckRuns(this.clock(), options.graceMs ?? 60_000, options.limit ?? 100);
    return Promise.all(runs.map((run) => this.view(run)));
  }

  async listVersions(): Promise<VersionSummary[]> {
    const [counts, drained] = await Promise.all([this.store.countVersions(), this.store.listDrainedVersions()]);
    return summarizeVersions(counts, drained, this.workflows.keys());
  }

  async drainVersion(workflow: string, version: string): Promise<boolean> {
    return this.setDrained(workflow, version, true);
  }

  async undrainVersion(workflow: string, version: string): Promise<boolean> {
    return this.setDrained(workflow, version, false);
  }

  private async setDrained(workflow: string, version: string, drained: boolean): Promise<boolean> {
    this.ensureOpen();
    check(z.string().min(1).max(200), workflow, "drainVersion: workflow");
    check(z.string().min(1).max(200), version, "drainVersion: version");
    const changed = await this.store.setVersionDrained(workflow, version, drained, this.clock());
    if (drained) this.drained.add(`${workflow}@${version}`);
    else this.drained.delete(`${workflow}@${version}`);
    for (const worker of this.workers) worker.setDrained(workflow, version, drained);
    return changed;
  }

  replay(source: string | JournalFile): Promise<ReplayReport> {
    this.ensureOpen();
    if (typeof source === "string") check(RUN_REF, source, "replay: runId");
    return replayRun(source, this.store, this.workflows);
  }

  startDispatcher(options?: DispatcherOptions): Dispatcher {
    this.ensureOpen();
    const dispatcher = new DispatcherImpl({ store: this.store, clock: this.clock, logger: this.logger, registry: this.outbox }, options);
    this.dispatchers.add(dispatcher);
    const stop = dispatcher.stop.bind(dispatcher);
    dispatcher.stop = async (opts) => {
      await stop(opts);
      this.dispatchers.delete(dispatcher);
    };
    return dispatcher;
  }

  onMessage<P = unknown>(topic: string, handler: OutboxHandler<P>): () => void {
    return this.outbox.add(topic, handler as OutboxHandler<any>);
  }

  async listOutbox(query: ListOutboxQuery = {}): Promise<OutboxMessage[]> {
    check(listOutboxLibraryQuerySchema, query, "listOutbox");
    return this.store.listOutbox(query);
  }

  async retryOutboxMessage(messageId: string): Promise<{ message: OutboxMessage; applied: boolean }> {
    this.ensureOpen();
    if (typeof messageId !== "string" || messageId.length === 0) throw new ValidationError("retryOutboxMessage: pass a message id (`<runId>:<opKey>`).");
    const result = await this.store.retryOutbox(messageId, this.clock());
    if (result.applied) for (const dispatcher of this.dispatchers) dispatcher.kick();
    return result;
  }

  startWorker(allOptions?: WorkerOptions): Worker {
    this.ensureOpen();
    const { dispatcher: dispatcherOptions, ...options } = allOptions ?? {};
    const dispatcher = dispatcherOptions === false ? undefined : this.startDispatcher(dispatcherOptions === true ? {} : dispatcherOptions);
    const worker = new WorkerImpl(
      {
        store: this.store,
        committer: this.committer,
        clock: this.clock,
        logger: this.logger,
        maxPayloadBytes: this.maxPayloadBytes,
        workflows: this.workflows,
        queues: this.queues,
        drained: this.drained,
        ...(this.maxRecoveryAttempts === undefined ? {} : { maxRecoveryAttempts: this.maxRecoveryAttempts }),
        emit: () => (this.observers.size > 0 ? this.emitEvent : undefined),
        aroundStep: () => this.aroundStep,
        onExecutionEnd: (runId, end, parentRunId) => {
          this.finished.emit(runId);
          // A queued run that ends frees a slot another run of its queue may be waiting for.
          if (this.queues.length > 0) this.kickWorkers();
          if (parentRunId && (end === "completed" || end === "failed")) this.notifyWorkers(parentRunId);
        },
      },
      options,
    );
    this.workers.add(worker);
    const retention = this.retention && new RetentionScheduler(this.store, this.retention, this.clock, this.logger);
    const deadlines = new DeadlineSweeper(
      this.store,
      this.clock,
      (runId) => this.cancel(runId, "deadline"),
      (error) => this.logger.log("error", "deadline sweep failed; retrying at the next poll", { error: serializeError(error) }),
      this.deadlinePollMs,
    );
    this.schedules.startScheduler();
    const stop = worker.stop.bind(worker);
    worker.stop = async (opts) => {
      await Promise.all([retention?.stop(), deadlines.stop()]);
      await Promise.all([stop(opts), dispatcher?.stop(opts)]);
      this.workers.delete(worker);
      if (this.workers.size === 0) await this.schedules.stopScheduler();
    };
    return worker;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([...this.workers].map((w) => w.stop({ drain: true })));
    await this.schedules.stopScheduler();
    await Promise.all([...this.dispatchers].map((d) => d.stop({ drain: true })));
    this.unsubscribeWake();
    if (this.calibrateTimer) clearInterval(this.calibrateTimer);
    await this.store.close();
  }

  private ensureOpen(): void {
    if (this.closed) throw new EngineClosedError();
  }

  private notifyWorkers(runId: string): void {
    for (const worker of this.workers) {
      worker.notify(runId);
      worker.kick();
    }
  }

  private kickWorkers(): void {
    for (const worker of this.workers) worker.kick();
    for (const dispatcher of this.dispatchers) dispatcher.kick();
  }

  /** The version of a workflow that `start(name)` would use (the last registered), if registered here. */
  private currentVersion(name: string): string | undefined {
    let version: string | undefined;
    for (const candidate of this.workflows.values()) if (candidate.name === name) version = candidate.version;
    return version;
  }

  private resolveWorkflow(workflow: Workflow<any, any> | string): Workflow<any, any> {
    if (typeof workflow === "string") {
      let found: Workflow<any, any> | undefined;
      for (const candidate of this.workflows.values()) if (candidate.name === workflow) found = candidate;
      if (!found) throw new WorkflowNotRegisteredError(workflow, [...new Set([...this.workflows.values()].map((w) => w.name))]);
      return found;
    }
    if (!isWorkflow(workflow)) throw new ValidationError("start: the first argument must be a workflow (from defineWorkflow) or a registered workflow name.");
    return workflow;
  }

  private async requireRun(runId: string): Promise<RunRecord> {
    check(RUN_REF, runId, "runId");
    const run = await this.store.getRun(runId);
    if (!run) throw new RunNotFoundError(runId);
    return run;
  }

  private makeHandle<O>(runId: string, created: boolean): RunHandle<O> {
    return {
      runId,
      created,
      result: (options) => this.result<O>(runId, options),
      info: () => this.getRun(runId),
    };
  }
}

/** A run row as the API shows it: payloads decoded with `secrets` redacted (values marked `secret()` always are). */
function toRunInfo(run: RunRecord, secrets?: RunSecrets): RunInfo {
  const decodeView = <T>(text: string | null): T => (secrets ? secrets.decode<T>(text) : decodeSecrets<T>(text, () => REDACTED));
  const info: RunInfo = {
    runId: run.runId,
    workflow: run.workflow,
    version: run.version,
    status: run.status,
    input: decodeView(run.input),
    parentRunId: run.parentRunId,
    wakeAt: run.wakeAt === null ? null : new Date(run.wakeAt),
    waitingFor: run.waitingFor ? decode<WaitDescriptor[]>(run.waitingFor) : [],
    leaseOwner: run.leaseOwner,
    leaseExpiresAt: run.leaseExpiresAt === null ? null : new Date(run.leaseExpiresAt),
    leaseEpoch: run.leaseEpoch,
    entries: run.lastSeq,
    createdAt: new Date(run.createdAt),
    updatedAt: new Date(run.updatedAt),
    finishedAt: run.finishedAt === null ? null : new Date(run.finishedAt),
  };
  if (run.output !== null) info.output = decodeView(run.output);
  if (run.error !== null) info.error = decodeView<SerializedError>(run.error);
  if (isTerminal(run.status)) info.waitingFor = [];
  return info;
}

/** A run whose payloads (or journal) cannot be decoded, as a listing shows it: payloads left out, since they cannot be redacted. */
function unreadableRun(run: RunRecord, error: unknown): RunInfo {
  return { ...toRunInfo({ ...run, input: "null", output: null, error: null, waitingFor: null }), unreadable: unreadableMessage(`run "${run.runId}"`, error) };
}

/** A human request that cannot be decoded, as a listing shows it: nothing that may need redacting. */
function unreadableHuman(request: HumanRequest, error: unknown): HumanRequest {
  const { context: _context, ...rest } = request;
  return { ...rest, question: "[unreadable]", answer: null, unreadable: unreadableMessage(`human request "${request.requestId}"`, error) };
}

/** The sizes of a run's input and output too large for a preview of `limit` bytes; undefined when both fit. */
function elidedPayloads(run: RunRecord, limit: number): { input?: number; output?: number } | undefined {
  const input = elidedSize(run.input, limit);
  const output = run.output === null ? undefined : elidedSize(run.output, limit);
  if (input === undefined && output === undefined) return undefined;
  return { ...(input === undefined ? {} : { input }), ...(output === undefined ? {} : { output }) };
}

/** Cuts a page of runs before its JSON passes `maxBytes` (keeping at least one run), with a cursor after the last one kept. */
function capBytes(page: { runs: RunInfo[]; nextCursor?: string }, maxBytes: number | undefined): { runs: RunInfo[]; nextCursor?: string } {
  if (maxBytes === undefined) return page;
  let total = 0;
  for (let i = 0; i < page.runs.length; i++) {
    total += Buffer.byteLength(encode(page.runs[i]), "utf8") + 1; // about the size the API writes
    if (total > maxBytes && i > 0) {
      const last = page.runs[i - 1]!;
      return { runs: page.runs.slice(0, i), nextCursor: encodeCursor({ createdAt: last.createdAt.getTime(), runId: last.runId }) };
    }
  }
  return page;
}
