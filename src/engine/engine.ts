import type { EventDefinition } from "./define-event.js";
import type { PublishResult } from "./event-triggers.js";
import type { QueueState } from "./queue-state.js";
import type { DebounceOptions, FlowOptions, QueueOptions } from "../core/flow-control.js";
import type { HumanAnswer, EntryKind, WaitDescriptor } from "../core/journal.js";
import type { RunStatus } from "../core/run.js";
import type { SerializedError } from "../core/serialize.js";
import type { HumanRequest, HumanRequestStatus, Store, WorkerRecord } from "../core/store.js";
import type { JournalCompaction } from "../core/compaction.js";
import type { CompactOptions, CompactResult, ExportOptions, ImportOptions, PruneOptions, PruneResult, RetentionPolicy } from "../core/retention-schemas.js";
import type { RunExport } from "../core/run-export.js";
import type { ListOutboxQuery, OutboxMessage } from "../core/outbox.js";
import type { ReplayReport, JournalFile, VersionSummary } from "../core/deploys.js";
import type { ForkOptions } from "./fork.js";
import type { Dispatcher, DispatcherOptions, OutboxHandler, OutboxOptions } from "./outbox.js";
import type { EngineObserver } from "./observer.js";
import type { Schedule, ScheduleInfo, ScheduleOptions } from "./schedule.js";
import type { Workflow } from "./workflow.js";
import type { PublishedValue, RequestOptions } from "./live-runs.js";
import type { Duration } from "../core/duration.js";
import type { PayloadOptions } from "../store/payloads/payload-store.js";

/**
 * Options of {@link createEngine}.
 * @example
 * const engine = await createEngine({ store: "sqlite:.cairn/cairn.db", workflows: [research] });
 */
import type { CredentialProvider } from "./credentials.js";
import type { EngineLogger } from "./logger.js";

export interface EngineOptions {
  /** A store URL (`sqlite:<path>`, `memory:`) or a Store. Default: `CAIRN_STORE`, else `sqlite:.cairn/cairn.db`. */
  store?: string | Store;
  /**
   * Credentials runs may use by name (`ctx.credential("github")`), each from a provider resolved at
   * every use, never journaled, audited, and revoked when the run ends (docs/operations/credentials.md).
   * @example
   * createEngine({ credentials: { github: envCredential("GITHUB_TOKEN"), npm: fileCredential("/run/secrets/npm") } })
   */
  credentials?: Record<string, CredentialProvider>;
  /** Workflows this engine can start and its workers can run. */
  workflows?: Workflow<any, any>[];
  /**
   * Event types (from `defineEvent`) whose payloads this engine checks when they are sent by name
   * (`sendEvent`, `publishEvent`, `POST /events`, webhooks). Those a workflow's `on`/`cancelOn` name are added.
   */
  events?: EventDefinition<any>[];
  /** Injectable clock (epoch ms) for tests. Default `Date.now`. */
  clock?: () => number;
  /** Step results and run outputs larger than this fail with PayloadTooLargeError. Default 4 MiB. */
  maxPayloadBytes?: number;
  /**
   * How payloads are stored (docs/operations/payloads.md): payloads over `inlineLimit` (default
   * `CAIRN_PAYLOAD_INLINE_LIMIT` when set, else 64 KiB) go to content-addressed blobs; `codec` encrypts them all at rest (default: AES-256-GCM
   * when `CAIRN_ENCRYPTION_KEY(S)` is set; `null` for none).
   */
  payloads?: PayloadOptions;
  /** Where `ctx.log` and engine diagnostics go. Default: JSON lines on stderr at `CAIRN_LOG_LEVEL` (default "warn"). */
  logger?: EngineLogger;
  /** Called with what happens in this engine's workers (steps, lease losses, answers); see also `engine.observe`. */
  observer?: EngineObserver;
  /**
   * Automatic retention: every worker of this engine prunes finished runs older than the policy says
   * (see `docs/operations/retention.md`). Default: keep everything.
   * @example
   * createEngine({ store, workflows, retention: { completedAfter: "30d", failedAfter: "90d", interval: "1h" } });
   */
  retention?: RetentionPolicy;
  /**
   * Schedules (from `defineSchedule`) saved to the store at start; their workflows must be in `workflows`.
   * Workers run the scheduler that fires them. See docs/operations/schedules.md.
   */
  schedules?: Schedule<any>[];
  /** The scheduler each engine with a worker runs. Defaults: enabled, pollMs 1000, leaseMs 10 000. */
  scheduler?: { enabled?: boolean; pollMs?: number; leaseMs?: number };
  /**
   * Named queues and their limits (flow control), enforced by the store across every worker and process:
   * `{ llm: { concurrency: 8, perKeyConcurrency: 2, rateLimit: { limit: 60, per: "1m" } } }`.
   * Runs join a queue through `defineWorkflow({ queue })` or `engine.start(…, { queue })`. Every engine whose
   * workers claim a queue's runs must declare it with the same limits. See docs/operations/flow-control.md.
   */
  queues?: Record<string, QueueOptions>;
  /** Outbox destinations (handlers, webhooks by topic) and retry settings for messages from `ctx.emit`; see `docs/operations/outbox.md`. */
  outbox?: OutboxOptions;
  /**
   * Dead-letter: a run whose last N attempts in a row ended without progress (its worker died or the
   * engine abandoned it, and no outcome was journaled) is moved to `dead` instead of being claimed
   * again; `engine.retry` revives it. Checked only when a run is re-claimed after such an attempt.
   * An attempt given back by a worker shutting down (drain, SIGTERM) never counts. Default
   * {@link DEFAULT_MAX_RECOVERY_ATTEMPTS} (10); 0: never, runs are recovered forever. See docs/operations/deploys.md.
   */
  maxRecoveryAttempts?: number;
  /** Deadlines (`start(…, { deadline })`): how often each worker looks for runs whose deadline passed. Default pollMs 1000. */
  deadlines?: { pollMs?: number };
}

/** The default of `createEngine({ maxRecoveryAttempts })`: a run is dead after 10 failed recoveries in a row. */
export const DEFAULT_MAX_RECOVERY_ATTEMPTS = 10;

export type { EngineLogger } from "./logger.js";

/** Options of `engine.start`. */
export interface StartOptions extends FlowOptions {
  /** Caller-chosen id (e.g. a thread id). Starting again with the same id and input returns the existing run. Not with `debounce`. */
  runId?: string;
  /**
   * Start this version of the workflow (registered with this engine, e.g. an older one still
   * deployed beside the current); default the current (last registered) version.
   */
  version?: string;
  /**
   * Debounce by key: while a run of this workflow started with the same key has not started yet, this start
   * replaces its input and moves its start to `period` from now (the handle is that run's, `created: false`);
   * otherwise it creates a run that starts after `period`. See docs/operations/flow-control.md.
   */
  debounce?: DebounceOptions;
  /**
   * Tags (`{ customer: "acme" }`): at most 16, keys of letters, digits, `_ - .`, values without control
   * characters. Stored in an indexed table, filterable in `listRuns` and the API, inherited by children.
   */
  tags?: Record<string, string>;
  /**
   * Ends the run when it passes (a duration from its start, or a Date): the run is cancelled with reason
   * "deadline" (running compensations as `cancel` does). A durable timer: it fires even if every worker was down.
   */
  deadline?: Duration | Date;
  /** Starts the run later (a Date or epoch ms): it is suspended until then, a durable timer. Not with `delay`. */
  startAt?: Date | number;
  /** Starts the run after this long (`"10m"`), like `startAt`. */
  delay?: Duration;
}

/** A handle on a run. */
export interface RunHandle<O = unknown> {
  readonly runId: string;
  /** False when `start` found an existing run with this id. */
  readonly created: boolean;
  /** Waits until the run finishes; resolves with its output or throws RunFailedError / RunCancelledError / RunCompensatedError / CompensationFailedError. */
  result(options?: { timeoutMs?: number }): Promise<O>;
  /** The run as it is now. */
  info(): Promise<RunInfo>;
}

/** A run as the API shows it (payloads decoded). */
export interface RunInfo {
  runId: string;
  workflow: string;
  version: string;
  status: RunStatus;
  input: unknown;
  output?: unknown;
  error?: SerializedError;
  parentRunId: string | null;
  wakeAt: Date | null;
  waitingFor: WaitDescriptor[];
  leaseOwner: string | null;
  leaseExpiresAt: Date | null;
  leaseEpoch: number;
  /** Number of journal entries. */
  entries: number;
  createdAt: Date;
  updatedAt: Date;
  finishedAt: Date | null;
  /** Set on a fork (`engine.fork`): the run and seq it was forked from, and that run's version when it differs. */
  forkedFrom?: { runId: string; atSeq: number; version?: string };
  /** Set in a listing (`previewBytes`) when the input or output was too large to show: their sizes in bytes; fetch the run itself for them. */
  elided?: { input?: number; output?: number };
  /** Set in a listing when a stored payload of this run cannot be decoded: why; its payloads are left out (docs/errors/PAYLOAD_UNREADABLE.md). */
  unreadable?: string;
  /** The run's tags (in `getRun`; list views leave them out). */
  tags?: Record<string, string>;
  /** The run this one continues (`ctx.continueAsNew`), in `getRun`. */
  continuedFrom?: string;
  /** The run this one continued as, in `getRun`. */
  continuedTo?: string;
  /** What compaction removed from its journal (`engine.compact`), in `getRun`; absent when nothing was. */
  compaction?: JournalCompaction;
}

/** A journal entry as the API shows it (payload decoded). */
export interface JournalEntryView {
  seq: number;
  kind: EntryKind;
  opKey: string | null;
  data: unknown;
  epoch: number;
  at: Date;
  /** Set (with `previewBytes`) when the entry's data was too large to show: its size in bytes; `data` is null. */
  elided?: number;
  /** Set when this entry's payload cannot be decoded: why; `data` is null (docs/errors/PAYLOAD_UNREADABLE.md). */
  unreadable?: string;
}

/** Candidate runs `engine.countRuns` checks at most for a text search before it answers with a lower bound. */
export const COUNT_SCAN_LIMIT = 5000;

/** Filters of `engine.listRuns`. */
export interface ListRunsOptions {
  status?: RunStatus | RunStatus[];
  workflow?: string;
  /** Only runs whose id starts with this text (e.g. `"tenant-a/"`), filtered by the store's query. */
  runIdPrefix?: string;
  /**
   * Only runs whose id, workflow name, error message, input or a tag (`key:value`) contains this
   * text as the run's views show it (secrets redacted), ignoring case (a plain substring, at most
   * 200 characters).
   */
  q?: string;
  /** Only top-level runs: leaves out child runs. */
  topLevel?: boolean;
  createdAfter?: Date | number;
  createdBefore?: Date | number;
  /** Only runs with every one of these tags. */
  tags?: Record<string, string>;
  /**
   * Leave out system runs (workflows named `cairn.…`, such as the alert runs of `cairn.alert`) unless
   * `workflow` names one. Default false: every run. The server's API and the CLI set it.
   */
  excludeSystem?: boolean;
  limit?: number;
  cursor?: string;
  /** Listings: an input or output larger than this many bytes is left out (null) and its size given in `elided`. */
  previewBytes?: number;
  /** Listings: the page ends (with a `nextCursor`) before its runs' JSON would pass this many bytes; at least one run is returned. */
  maxBytes?: number;
}

/** Options of `engine.startWorker`. */
/** Filters and paging of {@link Engine.listHumanRequests}. */
export interface ListHumanRequestsOptions {
  /** `pending` (waiting for a person), `answered` (by a person or an escalation), `closed` (the run finished first). */
  status?: HumanRequestStatus;
  runId?: string;
  /** Only requests of runs whose id starts with this text. */
  runIdPrefix?: string;
  /** By creation time. Default: oldest first (`asc`) for pending requests, newest first (`desc`) otherwise. */
  order?: "asc" | "desc";
  /** Page size: default and at most 1000. */
  limit?: number;
  /** The `nextCursor` of the previous page (same filters and order). */
  cursor?: string;
}

export interface WorkerOptions {
  /** Runs held at once. Default 16. */
  concurrency?: number;
  /** Idle poll interval, the safety net behind in-process wake-ups. Default 200 ms. */
  pollInterval?: number;
  /** Lease length. Default 30 s. */
  leaseMs?: number;
  /** Heartbeat period. Default leaseMs / 3. */
  heartbeatMs?: number;
  /** Default `${hostname}:${pid}:${random}`. */
  workerId?: string;
  /**
   * Also run an outbox dispatcher in this worker (stopped with it). Default true: it claims nothing,
   * and runs no query, while the engine has no outbox handler or webhook. `false` to run dispatchers apart.
   */
  dispatcher?: boolean | DispatcherOptions;
  /**
   * Workflow versions (`"research@1"`) this worker treats as retired: it does not claim their runs, on
   * top of those retired in the store with `engine.retireVersion` (`cairn worker --retire research@1`).
   */
  retire?: string[];
  /** @deprecated use {@link WorkerOptions.retire} (the same list; both are honoured). */
  drain?: string[];
}

/** A running worker. */
export interface Worker {
  readonly workerId: string;
  /** Runs currently held. */
  readonly active: number;
  /**
   * Stops claiming. With `drain: true` in-flight steps finish, their outcomes are journaled and
   * leases released; otherwise in-flight steps are aborted (their intents are reconciled by the next worker).
   */
  stop(options?: { drain?: boolean }): Promise<void>;
}

/** The engine: starts runs, delivers events, inspects and controls runs, hosts workers. */
export interface Engine {
  readonly store: Store;
  /**
   * A random id of this engine instance, naming it to the other processes that share its store: a
   * server's streams advertise runs under it, and its workers write live deltas (`step-progress`)
   * for runs that engines with another id stream (see `LiveDeltaStore`).
   */
  readonly instanceId: string;
  /** Starts a run (idempotent by runId). Throws RunConflictError if the id exists with another workflow or input. */
  start<I, O>(workflow: Workflow<I, O> | string, input: I, options?: StartOptions): Promise<RunHandle<O>>;
  /** A handle on an existing run. */
  handle<O = unknown>(runId: string): RunHandle<O>;
  /**
   * Delivers an event (buffered until a wait consumes it; idempotent by eventId). To a run that continued
   * as new, it goes to the last run of its chain, and an eventId any run of the chain holds is a
   * duplicate (docs/live-runs.md). With `secret: true` the payload is a secret (like `secret(payload)`):
   * the run gets it, its views show `"[redacted]"`.
   */
  sendEvent<T>(
    runId: string,
    type: string | EventDefinition<T>,
    payload?: T,
    options?: { eventId?: string; secret?: boolean },
  ): Promise<{ eventId: string; duplicate: boolean }>;
  /**
   * Publishes an event to no run in particular (docs/operations/events.md): starts one run of each
   * workflow whose `on` names the type (run id `<workflow>:<eventId>`, input the payload; a repeated
   * event id starts nothing new), then cancels the live runs a `cancelOn` of the type matches. The
   * payload is checked against the type's `defineEvent` schema first (EventInvalidError, nothing done).
   * @example
   * await engine.publishEvent(orderCreated, { orderId: "o-1", total: 12 }, { eventId: "evt-1" });
   */
  publishEvent<T>(type: string | EventDefinition<T>, payload?: T, options?: { eventId?: string }): Promise<PublishResult>;
  /** The run as views show it: values marked secret, and any later copy of their text, are `"[redacted]"`. */
  getRun(runId: string): Promise<RunInfo>;
  /**
   * The latest value the run published under `name` (`ctx.publish`), read from the store without
   * waking the run; undefined when it never published one. Throws RunNotFoundError for unknown runs.
   * @example
   * const progress = await engine.getPublished<{ done: number }>("thread-42", "progress");
   */
  getPublished<T = unknown>(runId: string, name: string): Promise<PublishedValue<T> | undefined>;
  /**
   * Sends a request to the run's `ctx.handle(name, fn)` handler and waits for its reply. Durable and
   * idempotent by `requestId`: delivered like an event, the reply is journaled, and asking again with
   * the same id returns that reply without running the handler again. Throws RequestFailedError when the
   * handler threw, RunFinishedError when the run ended without replying, a TIMEOUT CairnError after `timeoutMs`.
   * @example
   * const reply = await engine.request("thread-42", "steer", { topic: "sodium" }, { requestId: "steer-1" });
   */
  request<R = unknown>(runId: string, name: string, payload?: unknown, options?: RequestOptions): Promise<R>;
  listRuns(options?: ListRunsOptions): Promise<{ runs: RunInfo[]; nextCursor?: string }>;
  /**
   * How many runs a listing with these filters holds over all its pages. Without `q` one grouped
   * store query; with `q` the store's candidates are checked against their views (secrets
   * redacted) up to {@link COUNT_SCAN_LIMIT} of them, past which `exact` is false and `total` a lower bound.
   */
  countRuns(options?: Omit<ListRunsOptions, "limit" | "cursor" | "previewBytes" | "maxBytes">): Promise<{ total: number; exact: boolean }>;
  /** `value` with the run's secrets redacted, as its views show them (e.g. live model output before it is journaled). */
  redact<T>(runId: string, value: T): Promise<T>;
  /** The run's journal as views show it: secrets redacted like {@link Engine.getRun}. */
  journal(runId: string, options?: { afterSeq?: number; limit?: number; previewBytes?: number }): Promise<JournalEntryView[]>;
  /**
   * Cancels a live run: its running step's signal is aborted and it ends `cancelled`. A run that
   * registered compensations or holds resources is instead handed back to a worker (`run.cancelling`,
   * status `pending`): the worker compensates in reverse order and releases, and the run ends
   * `compensated` (or `compensation_failed`), or `cancelled` when it only held resources.
   */
  cancel(runId: string, reason?: string): Promise<RunInfo>;
  /**
   * Resumes a failed or dead (dead-lettered) run from its journal; completed steps are not run again,
   * failed ones are; a dead run's recovery counter starts over. A `compensation_failed` run resumes its
   * unwinding: the failed compensation runs again (same idempotency key, fresh retries), then the older
   * ones; completed compensations are not re-run.
   */
  retry(runId: string): Promise<RunInfo>;
  /**
   * Time travel: creates a new run whose journal is this run's up to `atSeq` (optionally with one step
   * result patched) and which continues from there under the code registered now; the original is
   * untouched. The fork is pending and any worker for its workflow version runs it.
   * Throws RunNotFoundError, ValidationError for an `atSeq` or patch that does not fit the journal,
   * RunConflictError when `runId` is taken by another run. See `docs/how-it-works.md` (Forks).
   * @example
   * const fork = await engine.fork("thread-42", { atSeq: 12, patch: { seq: 9, result: "fixed" } });
   * console.log(await fork.result());
   */
  fork<O = unknown>(runId: string, options: ForkOptions): Promise<RunHandle<O>>;
  /** Waits for a run to finish. */
  result<O = unknown>(runId: string, options?: { timeoutMs?: number }): Promise<O>;
  /** Answers a human request (e.g. "did this happen?" for an `unsafe` step). */
  respondToHuman(requestId: string, answer: HumanAnswer): Promise<{ answer: HumanAnswer; duplicate: boolean }>;
  /**
   * Human requests, as views show them: secrets in the question, context and secret answers redacted.
   * One page (default and at most 1000); see {@link Engine.listHumanRequestPage} for the next ones.
   * @example
   * const waiting = await engine.listHumanRequests({ status: "pending", runIdPrefix: "team-a/" });
   */
  listHumanRequests(options?: ListHumanRequestsOptions): Promise<HumanRequest[]>;
  /** {@link Engine.listHumanRequests} with `nextCursor` (present when more match) to pass as `cursor`. */
  listHumanRequestPage(options?: ListHumanRequestsOptions): Promise<{ requests: HumanRequest[]; nextCursor?: string }>;
  /** One human request, redacted like {@link Engine.listHumanRequests}; undefined when unknown. */
  getHumanRequest(requestId: string): Promise<HumanRequest | undefined>;
  /** Workers that heartbeated within `staleAfterMs` (default 60 s). */
  listWorkers(options?: { staleAfterMs?: number }): Promise<WorkerRecord[]>;
  /** Flow control: every queue with unfinished runs or declared on this engine, with its limits and running / waiting / suspended counts, in total and per key. */
  listQueues(): Promise<QueueState[]>;
  /** @deprecated use {@link Engine.listQueues} (the same answer). */
  queueStates(): Promise<QueueState[]>;
  /** Non-terminal runs that nothing will move (see Store.listStuckRuns). There should never be any. */
  listStuckRuns(options?: { graceMs?: number; limit?: number }): Promise<RunInfo[]>;
  startWorker(options?: WorkerOptions): Worker;
  /**
   * Starts an outbox dispatcher: delivers messages from `ctx.emit` to this engine's handlers and
   * webhooks, at least once (`startWorker` starts one unless `dispatcher: false`).
   * @example
   * const dispatcher = engine.startDispatcher({ concurrency: 4 });
   * await dispatcher.stop({ drain: true });
   */
  startDispatcher(options?: DispatcherOptions): Dispatcher;
  /**
   * Delivers the messages of `topic` to `handler` (in addition to `createEngine({ outbox: { handlers } })`).
   * Returns a function that removes it.
   * @example
   * engine.onMessage("order.paid", async ({ messageId, payload }) => { await mail.send(payload, { idempotencyKey: messageId }); });
   */
  onMessage<P = unknown>(topic: string, handler: OutboxHandler<P>): () => void;
  /** Outbox messages in emit order (default: every status, 50 at most). */
  listOutbox(query?: ListOutboxQuery): Promise<OutboxMessage[]>;
  /** Re-queues a dead message (attempts start again). Throws OutboxMessageNotFoundError; `applied: false` when it was not dead. */
  retryOutboxMessage(messageId: string): Promise<{ message: OutboxMessage; applied: boolean }>;
  /**
   * Runs per workflow version and status (with retired and registered flags; the retired flag is
   * named `drained`), so an operator sees which versions still have live runs before removing their code.
   */
  listVersions(): Promise<VersionSummary[]>;
  /**
   * Retires a workflow version: stops every worker (this engine's at once, others on their next
   * heartbeat) from claiming its runs. Its runs stay where they are, visible in `listVersions`, until
   * the version is reinstated, or they are cancelled. Returns false when it was already retired.
   */
  retireVersion(workflow: string, version: string): Promise<boolean>;
  /** Reinstates a retired version: workers claim its runs again. Returns false when it was not retired. */
  reinstateVersion(workflow: string, version: string): Promise<boolean>;
  /** @deprecated use {@link Engine.retireVersion} (the same operation). */
  drainVersion(workflow: string, version: string): Promise<boolean>;
  /** @deprecated use {@link Engine.reinstateVersion} (the same operation). */
  undrainVersion(workflow: string, version: string): Promise<boolean>;
  /**
   * Replays a run's journal against the code registered now, executing nothing (no step runs, no
   * timer, no write), and reports the first divergence, or how far it replays cleanly.
   * `source`: a runId in this engine's store, or a run export (`{ format: "cairn.run/1", run, journal }`).
   * @example
   * const report = await engine.replay("thread-42");
   * if (!report.ok) console.error(report.divergence?.message);
   */
  replay(source: string | JournalFile): Promise<ReplayReport>;
  /**
   * Adds an observer of this engine's events (steps of its workers, lease losses, human answers),
   * e.g. for metrics. Returns a function that removes it. Observers are called synchronously after
   * the entries they describe are durable; one that throws is logged and otherwise ignored.
   * @example
   * const stop = engine.observe((event) => { if (event.type === "step") steps.inc({ outcome: event.outcome }); });
   */
  observe(observer: EngineObserver): () => void;
  /**
   * Deletes finished runs that finished before a cutoff, with their journal, inbox, human requests and
   * search index, in short batches. Live runs are never touched: each run is re-checked (terminal, same
   * journal length, no live parent or child) in the transaction that deletes it.
   * @example
   * const { runIds } = await engine.prune({ finishedBefore: "30d", statuses: ["completed"], archiveDir: "archive" });
   */
  prune(options: PruneOptions): Promise<PruneResult>;
  /**
   * Compacts loops: deletes the journal entries that loop checkpoints (snapshots, completions) written
   * before the cutoff supersede, in live and finished runs, one short transaction per run. Resume
   * reads the same entries as before and replay is unchanged; what stays: `run.created`, checkpoints
   * and everything after the newest one, entries of other ops, human requests, children, events,
   * agent messages and the agent's model and tool calls (its transcript and spend). Seqs keep their
   * numbers; the run's compaction marker (`JournalCompaction`, `engine.getCompaction`) counts what went, and a fork must cut at or
   * after its `coveredSeq`. See docs/operations/retention.md.
   * @example
   * const { runIds, entries, bytes } = await engine.compact({ checkpointBefore: "1h" });
   */
  compact(options: CompactOptions): Promise<CompactResult>;
  /** What compaction removed from a run's journal, or undefined when nothing was (see {@link Engine.compact}). */
  getCompaction(runId: string): Promise<JournalCompaction | undefined>;
  /**
   * The run with everything needed to restore it (journal, inbox, human requests), as a versioned
   * export file; write it with `JSON.stringify`. Throws RunNotFoundError, or RunNotFinishedError for a
   * live run unless `force`.
   */
  exportRun(runId: string, options?: ExportOptions): Promise<RunExport>;
  /**
   * Restores an exported run (parsed JSON from {@link Engine.exportRun}) into this store, all or
   * nothing, with its status, journal seqs and times as exported. Throws ValidationError for a bad
   * file and RunConflictError when the run id exists (import under another id with `as`).
   */
  importRun(data: unknown, options?: ImportOptions): Promise<RunInfo>;
  /**
   * Creates or redefines a schedule at run time (kept in the store: every engine with a worker and the
   * workflow fires it). Redefining keeps its progress. Throws InvalidScheduleError, WorkflowNotRegisteredError.
   * @example
   * await engine.schedule({ name: "hourly-sync", workflow: sync, cron: "0 * * * *", overlap: "buffer" });
   */
  schedule<I>(schedule: Schedule<I> | ScheduleOptions<I>): Promise<ScheduleInfo>;
  /** Stops firing a schedule until resumed (ticks meanwhile are not fired). Throws ScheduleNotFoundError. */
  pauseSchedule(name: string): Promise<ScheduleInfo>;
  /** Fires a paused schedule again, from its next tick after now. Throws ScheduleNotFoundError. */
  resumeSchedule(name: string): Promise<ScheduleInfo>;
  /** Removes a schedule (runs it started are kept). A schedule in `createEngine({ schedules })` comes back at the next start. */
  deleteSchedule(name: string): Promise<void>;
  /** One schedule with its next fire time, last tick, last run and counts. Throws ScheduleNotFoundError. */
  getSchedule(name: string): Promise<ScheduleInfo>;
  /** Every schedule in the store, by name. */
  listSchedules(): Promise<ScheduleInfo[]>;
  /** Stops workers (draining) and closes the store. */
  close(): Promise<void>;
}
