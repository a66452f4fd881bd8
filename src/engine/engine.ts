import type { HumanAnswer, EntryKind, WaitDescriptor } from "../core/journal.js";
import type { RunStatus } from "../core/run.js";
import type { SerializedError } from "../core/serialize.js";
import type { HumanRequest, Store, WorkerRecord } from "../core/store.js";
import type { ForkOptions } from "./fork.js";
import type { EngineObserver } from "./observer.js";
import type { Workflow } from "./workflow.js";

/**
 * Options of {@link createEngine}.
 * @example
 * const engine = await createEngine({ store: "sqlite:.cairn/cairn.db", workflows: [research] });
 */
export interface EngineOptions {
  /** A store URL (`sqlite:<path>`, `memory:`) or a Store. Default: `CAIRN_STORE`, else `sqlite:.cairn/cairn.db`. */
  store?: string | Store;
  /** Workflows this engine can start and its workers can run. */
  workflows?: Workflow<any, any>[];
  /** Injectable clock (epoch ms) for tests. Default `Date.now`. */
  clock?: () => number;
  /** Step results and run outputs larger than this fail with PayloadTooLargeError. Default 4 MiB. */
  maxPayloadBytes?: number;
  /** Where `ctx.log` and engine diagnostics go. Default: JSON lines on stderr at `CAIRN_LOG_LEVEL` (default "warn"). */
  logger?: EngineLogger;
  /** Called with what happens in this engine's workers (steps, lease losses, answers); see also `engine.observe`. */
  observer?: EngineObserver;
}

/** A sink for log records. */
export interface EngineLogger {
  log(level: "debug" | "info" | "warn" | "error", message: string, fields: Record<string, unknown>): void;
}

/** Options of `engine.start`. */
export interface StartOptions {
  /** Caller-chosen id (e.g. a thread id). Starting again with the same id and input returns the existing run. */
  runId?: string;
}

/** A handle on a run. */
export interface RunHandle<O = unknown> {
  readonly runId: string;
  /** False when `start` found an existing run with this id. */
  readonly created: boolean;
  /** Waits until the run finishes; resolves with its output or throws RunFailedError / RunCancelledError. */
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
}

/** A journal entry as the API shows it (payload decoded). */
export interface JournalEntryView {
  seq: number;
  kind: EntryKind;
  opKey: string | null;
  data: unknown;
  epoch: number;
  at: Date;
}

/** Filters of `engine.listRuns`. */
export interface ListRunsOptions {
  status?: RunStatus | RunStatus[];
  workflow?: string;
  /** Only runs whose id starts with this text (e.g. `"tenant-a/"`), filtered by the store's query. */
  runIdPrefix?: string;
  createdAfter?: Date | number;
  createdBefore?: Date | number;
  limit?: number;
  cursor?: string;
}

/** Options of `engine.startWorker`. */
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
  /** Starts a run (idempotent by runId). Throws RunConflictError if the id exists with another workflow or input. */
  start<I, O>(workflow: Workflow<I, O> | string, input: I, options?: StartOptions): Promise<RunHandle<O>>;
  /** A handle on an existing run. */
  handle<O = unknown>(runId: string): RunHandle<O>;
  /**
   * Delivers an event (buffered until a wait consumes it; idempotent by eventId). With `secret: true`
   * the payload is a secret (like `secret(payload)`): the run gets it, its views show `"[redacted]"`.
   */
  sendEvent(runId: string, type: string, payload?: unknown, options?: { eventId?: string; secret?: boolean }): Promise<{ eventId: string; duplicate: boolean }>;
  /** The run as views show it: values marked secret, and any later copy of their text, are `"[redacted]"`. */
  getRun(runId: string): Promise<RunInfo>;
  listRuns(options?: ListRunsOptions): Promise<{ runs: RunInfo[]; nextCursor?: string }>;
  /** `value` with the run's secrets redacted, as its views show them (e.g. live model output before it is journaled). */
  redact<T>(runId: string, value: T): Promise<T>;
  /** The run's journal as views show it: secrets redacted like {@link Engine.getRun}. */
  journal(runId: string, options?: { afterSeq?: number; limit?: number }): Promise<JournalEntryView[]>;
  /** Cancels a live run: its running step's signal is aborted and it ends `cancelled`. */
  cancel(runId: string, reason?: string): Promise<RunInfo>;
  /** Resumes a failed run from its journal; completed steps are not run again, failed ones are. */
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
  /** Human requests, as views show them: secrets in the question, context and secret answers redacted. */
  listHumanRequests(options?: { status?: "pending" | "answered"; runId?: string }): Promise<HumanRequest[]>;
  /** One human request, redacted like {@link Engine.listHumanRequests}; undefined when unknown. */
  getHumanRequest(requestId: string): Promise<HumanRequest | undefined>;
  /** Workers that heartbeated within `staleAfterMs` (default 60 s). */
  listWorkers(options?: { staleAfterMs?: number }): Promise<WorkerRecord[]>;
  /** Non-terminal runs that nothing will move (see Store.listStuckRuns). There should never be any. */
  listStuckRuns(options?: { graceMs?: number; limit?: number }): Promise<RunInfo[]>;
  startWorker(options?: WorkerOptions): Worker;
  /**
   * Adds an observer of this engine's events (steps of its workers, lease losses, human answers),
   * e.g. for metrics. Returns a function that removes it. Observers are called synchronously after
   * the entries they describe are durable; one that throws is logged and otherwise ignored.
   * @example
   * const stop = engine.observe((event) => { if (event.type === "step") steps.inc({ outcome: event.outcome }); });
   */
  observe(observer: EngineObserver): () => void;
  /** Stops workers (draining) and closes the store. */
  close(): Promise<void>;
}
