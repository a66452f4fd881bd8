import type { EventDefinition } from "./define-event.js";
import type { StepFlowOptions } from "../core/step-flow.js";
import type { EmitOptions, EmittedMessage } from "./emit.js";
import type { Duration } from "../core/duration.js";
import type { HumanAnswer } from "../core/journal.js";
import type { AskHumanRequest, HumanReply } from "./ask-human-request.js";

export type { AskHumanRequest, HumanEscalation, HumanNoticePayload, HumanReply } from "./ask-human-request.js";

/**
 * What a step function receives.
 * @example
 * await ctx.step("charge", ({ idempotencyKey }) => stripe.charges.create({ amount }, { idempotencyKey }));
 */
export interface StepInfo {
  /** `runId:opKey` — the same on every attempt and after every crash; pass it downstream. */
  idempotencyKey: string;
  /** 1 for the first attempt. */
  attempt: number;
  /**
   * How many earlier attempts of this step started (their intent is journaled) but never got an
   * outcome: the worker died or lost its lease mid-attempt. Their effects may have happened (e.g. a
   * model call the provider billed); a step can count them, or refuse to try again.
   */
  unconfirmed: number;
  /** Aborted on cancel, timeout, lease loss or worker shutdown. */
  signal: AbortSignal;
  /** Tells the engine the step is alive: renews the run's lease now. */
  heartbeat(): void;
  /**
   * Publishes ephemeral progress of this attempt (e.g. a model's partial text) to this engine's
   * observers as a `step-progress` event, which the server's stream forwards as `event: delta`.
   * Never journaled (the step's result is the source of truth); dropped when nobody observes.
   */
  progress(data: unknown): void;
}

/** How a step's side effect behaves if it may have happened before a crash (DESIGN §3.4). */
export type StepEffect = "none" | "idempotent" | "reversible" | "unsafe";

/** What `reconcile` reports about an attempt whose outcome was never journaled. */
export type ReconcileResult<T> = { done: true; value: T } | { done: false };

/** Retry policy of a step. Delays grow exponentially with full jitter, capped at `maxDelay`. */
export interface RetryPolicy {
  /** Total attempts including the first. Default 3. */
  maxAttempts?: number;
  /** Default "1s". */
  initialDelay?: Duration;
  /** Default "1h". */
  maxDelay?: Duration;
  /** Default 2. */
  backoffFactor?: number;
  /** Error names (or `code`s) that are never retried. */
  nonRetryable?: string[];
}

/** Options of `ctx.step`. */
export interface StepOptions<T> extends StepFlowOptions {
  retry?: RetryPolicy;
  /** Per-attempt timeout; the attempt's signal is aborted and it fails with StepTimeoutError (retryable). */
  timeout?: Duration;
  /** Default "idempotent": after a crash between intent and outcome the step runs again with the same key. */
  effect?: StepEffect;
  /**
   * Undo of this step. Once the step completes, its compensation is registered (journaled); if the
   * run then fails for good, is cancelled, or calls `ctx.compensate()`, the registered compensations
   * run in reverse order, each as a journaled action with its own retries (`compensateRetry`), and the
   * run ends `compensated` or `compensation_failed` (docs/operations/sagas.md). Called with the step's
   * result and an idempotency key of its own (`<runId>:<opKey>:compensate`), the same on every attempt.
   * A `reversible` step interrupted mid-flight is also compensated (with `undefined`) before it runs again.
   * A step cut short by a cancel (its intent journaled, its outcome fenced out) is compensated when the
   * run unwinds: with what `reconcile` finds (not at all if it finds nothing), else with `undefined`.
   * Steps inside `ctx.loop` iterations register too (docs/operations/sagas.md, "Limits").
   */
  compensate?: (result: T | undefined, info: { idempotencyKey: string; attempt?: number }) => Promise<void> | void;
  /** Retries of this step's compensation; defaults to the step's `retry`. */
  compensateRetry?: RetryPolicy;
  /**
   * Journaled with every intent of this step (plain JSON): what it is about to do, e.g. a tool call's
   * name and argument hash, so the journal shows it even when the outcome never arrives.
   */
  intent?: unknown;
  /**
   * Makes the step's result findable with `ctx.searchJournal`: the text returned is indexed (SQLite
   * FTS5, PostgreSQL tsvector) with the step's outcome, in the same transaction.
   */
  searchText?: (result: T) => string;
  /**
   * The result is a secret (an access token, a password): the journal keeps it, because replay
   * needs it, but every view of the journal (`engine.journal`, the HTTP journal route and stream,
   * `cairn show`) shows `"[redacted]"` instead. Do not also give it a `searchText`.
   */
  secret?: boolean;
  /**
   * What the "did this happen?" request of an interrupted `unsafe` step shows the person (plain JSON,
   * `secret()` values redacted in views), e.g. a tool call's name, arguments and idempotency key.
   */
  recoveryContext?: unknown;
  /**
   * JSON Schema of the step's result. When given, a person who answers "did this happen?" with
   * `skip` must give a value (the result the step would have returned), checked against it;
   * `{}` requires a value of any shape.
   */
  resultSchema?: Record<string, unknown>;
  /** Asked first after a crash between intent and outcome: did the effect happen, and with what value? */
  reconcile?: (idempotencyKey: string) => Promise<ReconcileResult<T>> | ReconcileResult<T>;
  /**
   * Fresh approval: before the step runs, a person must approve it again when the run was recovered
   * after a crash (`onResume`) or slept longer than `afterSleep`. The question is an `ctx.askHuman`
   * op (`approve:<name>@<k>`, in the inbox like any other); a step replayed from the journal asks
   * nothing. See docs/operations/approvals.md.
   * @example
   * await ctx.step("wire-money", () => bank.send(order), { approval: { onResume: true, afterSleep: "1h" } });
   */
  approval?: ResumeApproval;
}

/** When a step (or an agent tool call) needs a person's approval again before it runs. */
export interface ResumeApproval {
  /** Ask when this execution recovered the run after its previous worker died (its lease expired). */
  onResume?: boolean;
  /** Ask when the run was suspended (asleep, waiting) for longer than this before this execution. */
  afterSleep?: Duration;
  /** The question; default names the step and why it asks. */
  question?: string;
  /** How long the person may take; on timeout the step is refused (default: no limit). */
  timeout?: Duration;
}

/** What `ctx.acquire` acquires and how to give it back. */
export interface ResourceOptions<T> {
  /** Acquires the resource; runs as an idempotent step (again with the same idempotency key after a crash mid-flight). */
  acquire: (info: StepInfo) => Promise<T> | T;
  /** Releases it; may run again with the same idempotency key after a crash mid-release, so make it idempotent. */
  release: (value: T, info: { idempotencyKey: string; attempt: number }) => Promise<void> | void;
  /** Retries of the acquisition and of each release. Default: the step default (3 attempts). */
  retry?: RetryPolicy;
}

/** A resource held by a run (`ctx.acquire`). */
export interface ResourceHandle<T> {
  /** The acquired value, as journaled. */
  readonly value: T;
  /** The acquisition's op key (`acquire:<name>#k`). */
  readonly key: string;
  /** Releases it now (journaled; a no-op once released, by the workflow or the engine). */
  release(): Promise<void>;
}

/** Options of `ctx.waitForEvent`. */
export interface WaitOptions {
  /** Throws TimeoutError when no event arrives in time. */
  timeout?: Duration;
  /** Op name; defaults to the event type. */
  name?: string;
  /**
   * Only an event whose payload has these values consumes the wait (each key a field, or a dotted path
   * like `"order.id"`; values compared as JSON). Other events of the type stay buffered for other waits.
   * @example
   * await ctx.waitForEvent("approval", { match: { orderId: input.id } });
   */
  match?: Record<string, unknown>;
}

/** Options of `ctx.child`. */
export interface ChildOptions {
  /** Op name; defaults to the child workflow's name. */
  name?: string;
  /**
   * Default `${parentRunId}/${opKey}`. An id another run already holds (a run of its own, or another
   * parent's child) fails the op with RunConflictError naming the holder: its end could never wake this run.
   */
  runId?: string;
}

/** One hit of `ctx.searchJournal`. */
export interface JournalSearchHit {
  seq: number;
  opKey: string;
  /** The indexed text. */
  text: string;
}

/** Options of `ctx.loop`. */
export interface LoopOptions {
  /**
   * Journal the state after every this many iterations (default 10; 0 never). A resume starts
   * from the newest snapshot and reads nothing older, so it costs the same after 100 or 100,000
   * iterations. Each snapshot writes the whole state: keep it small, or snapshot less often.
   */
  snapshotEvery?: number;
}

/** What a loop body gets besides the state. */
export interface LoopIteration {
  /**
   * The context of this iteration: ops issued through it are keyed `<loop>/<index>/<name>#k`, so
   * each iteration numbers its ops afresh and a resume can skip whole iterations. Inside the body,
   * issue ops through this context, not the outer one.
   */
  readonly ctx: WorkflowContext;
  /** 0 for the first iteration. */
  readonly index: number;
  /** Ends the loop: `return it.done(result)`; the loop resolves to `result`. */
  done<R>(result: R): LoopDone<R>;
}

/** What `it.done(result)` returns; the loop resolves to `result`. */
export class LoopDone<R> {
  constructor(readonly result: R) {}
}

/** Structured log that is silent while replaying. */
export interface WorkflowLogger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/**
 * The durable context a workflow runs with. Every method is an op with key
 * `name#k` (k = occurrence of that name in the run). Workflow code must be
 * deterministic: take time, randomness and ids from `ctx`, and do effects in steps.
 */
export interface WorkflowContext {
  readonly runId: string;
  readonly workflow: string;
  readonly version: string;
  /** True while journaled history is being replayed. */
  readonly replaying: boolean;
  readonly log: WorkflowLogger;
  /**
   * Runs `fn` at most once per success: its intent is journaled before it runs and its
   * outcome before the workflow sees it; on replay the journaled outcome is returned.
   */
  step<T>(name: string, fn: (info: StepInfo) => Promise<T> | T, options?: StepOptions<T>): Promise<T>;
  /** A durable timer: survives restarts, fires once. */
  sleep(name: string, duration: Duration): Promise<void>;
  sleepUntil(name: string, until: Date | number): Promise<void>;
  /**
   * Waits for an event sent with `engine.sendEvent(runId, type, …)`. Throws TimeoutError on expiry.
   * Given an event type made with `defineEvent`, the payload has its schema's type.
   */
  waitForEvent<T = unknown>(type: string, options?: WaitOptions): Promise<T>;
  waitForEvent<T>(type: EventDefinition<T>, options?: WaitOptions): Promise<T>;
  /**
   * Asks a person and waits, durably, for the answer: the run suspends meanwhile and holds nothing.
   * Answer with `engine.respondToHuman(requestId, { action: "answer", option, value?, by? })` or
   * `cairn answer`. Several requests may be pending at once (issue them concurrently).
   */
  askHuman<T = unknown>(request: AskHumanRequest): Promise<HumanReply<T>>;
  /** Starts a child run and waits for its result (or its error). */
  child<I, O>(workflow: Workflow<I, O>, input: I, options?: ChildOptions): Promise<O>;
  /**
   * A durable loop: runs `body(state, it)` for iterations 0, 1, … until it returns `it.done(result)`,
   * each time with the state the previous iteration returned. The state is snapshotted every
   * `snapshotEvery` iterations; a resume loads the newest snapshot and only the journal after it.
   * Every op an iteration starts must settle before the body returns.
   * @example
   * const total = await ctx.loop("pages", { cursor: null, n: 0 }, async (s, it) => {
   *   const page = await it.ctx.step("fetch", () => api.list(s.cursor));
   *   return page.next ? { cursor: page.next, n: s.n + page.items.length } : it.done(s.n + page.items.length);
   * }, { snapshotEvery: 50 });
   */
  loop<S, R>(
    name: string,
    initial: S,
    body: (state: S, iteration: LoopIteration) => Promise<S | LoopDone<R>> | S | LoopDone<R>,
    options?: LoopOptions,
  ): Promise<R>;
  /**
   * Full-text search over this run's journaled step results that were given a `searchText`
   * (most relevant first). Journaled as a step, so replay returns the same hits.
   */
  searchJournal(query: string, options?: { limit?: number; name?: string }): Promise<JournalSearchHit[]>;
  /**
   * Unwinds the saga now: every compensation registered so far (by completed steps with a
   * `compensate`) runs, in reverse order of registration, and the run ends `compensated` (or
   * `compensation_failed`). The returned promise never settles: workflow code after it does not
   * run, and a `try`/`catch` cannot swallow it. Resources still held are released afterwards.
   * @example
   * if (!(await ctx.step("check-fraud", () => fraud.check(order)))) await ctx.compensate("fraud suspected");
   */
  compensate(reason?: string): Promise<never>;
  /**
   * Acquires a resource (a lock, a lease, a sandbox, a connection) as a journaled step named
   * `acquire:<name>`: on replay the journaled value is returned and `acquire` is not called again.
   * Release it with `handle.release()` (journaled, exactly once, run again with the same idempotency
   * key if a crash interrupted it). Whatever is still held when the run reaches a terminal state
   * (completed, failed, cancelled, compensated…) is released by the engine, exactly once
   * (docs/operations/resources.md).
   * @example
   * const lock = await ctx.acquire("lock", { acquire: ({ idempotencyKey }) => locks.take("invoice-7", idempotencyKey), release: (l) => locks.drop(l) });
   * await ctx.step("write", () => write(lock.value));
   * await lock.release();
   */
  acquire<T>(name: string, resource: ResourceOptions<T>): Promise<ResourceHandle<T>>;
  /**
   * A credential by name, from the provider registered with `createEngine({ credentials })`: resolved
   * now (so the current value after a rotation), never journaled, each use written to the audit log
   * with the run, the use's op key (`credential:<name>#k`) and `scope`. Refused with
   * CredentialRevokedError once the run has ended. Use it inside the step that needs it, and do not
   * return it from a step (step results are journaled). See docs/operations/credentials.md.
   * @example
   * await ctx.step("open-pr", async () => github.openPr(await ctx.credential("github", { scope: "repo:write" }), pr));
   */
  credential(name: string, options?: { scope?: string }): Promise<string>;
  /**
   * Emits a message to the transactional outbox: the message is written in the same store commit as
   * its journal entry, so it exists exactly when the run's history says it was emitted, and replay
   * never emits it again. A dispatcher then delivers it at least once to the handlers and webhooks of
   * its topic (see `docs/operations/outbox.md`). Resolves with its stable message id
   * (`<runId>:<opKey>`) for consumers to deduplicate by. The op key is `<name>#k`, name defaulting to the topic.
   * @throws ValidationError for a bad topic or a payload the journal cannot hold; PayloadTooLargeError.
   * @example
   * const order = await ctx.step("charge", () => charge(input));
   * await ctx.emit("order.paid", { orderId: order.id, amount: order.amount });
   */
  emit(topic: string, payload: unknown, options?: EmitOptions): Promise<EmittedMessage>;
  /**
   * Publishes a named value clients can read while the run lives (`engine.getPublished`,
   * `GET /runs/:id/values/:name`) without waking it: a journaled op (key `publish:<name>#k`) whose
   * commit replaces the run's row for `name`, so reading costs one lookup however often the run
   * publishes. Replay never publishes again. Resolves once the value is journaled.
   * @example
   * await ctx.publish("progress", { done: 3, of: 10 });
   */
  publish(name: string, value: unknown): Promise<void>;
  /**
   * Registers a handler for requests named `name` (`engine.request(runId, name, payload, { requestId })`).
   * Each request is delivered like an event (buffered until the handler takes it, exactly once by
   * request id), `fn` runs as workflow code (it may call ctx ops; replay runs it again with journaled
   * results) and its return value is journaled as the reply the caller receives. A handler that throws
   * replies with its error (`RequestFailedError`). Call it at the top of the workflow, outside loops;
   * requests are handled while the run lives.
   * @example
   * let topic = input.topic;
   * ctx.handle("steer", (payload) => { topic = (payload as { topic: string }).topic; return { ok: true, topic }; });
   */
  handle<P = unknown, R = unknown>(name: string, fn: (payload: P) => R | Promise<R>): void;
  /**
   * Ends this run and starts a fresh run of the same workflow with `input`, so a loop that must run
   * forever keeps a short journal. The run ends `completed` (output null) with a `run.continued` entry;
   * the commit that writes it creates the next run (id `<runId>~2`, then `~3`, …), with the same tags and
   * parent, so a crash can neither lose it nor start it twice. `run.result()` follows the chain to the
   * last run's result. The returned promise never settles. Not in a run holding compensations or resources.
   * @example
   * if (state.turns >= 500) return ctx.continueAsNew({ summary: state.summary });
   */
  continueAsNew(input: unknown): Promise<never>;
  /** Journaled wall-clock time. */
  now(name?: string): Date;
  /** Journaled `Math.random()`. */
  random(name?: string): number;
  /** Journaled random UUID. */
  uuid(name?: string): string;
}

/** A workflow definition. */
export interface Workflow<I = unknown, O = unknown> {
  readonly name: string;
  readonly version: string;
  /** The queue its runs join by default (flow control); see {@link WorkflowDefinition.queue}. */
  readonly queue?: string;
  /** Event types that start a run of it (see {@link WorkflowDefinition.on}). */
  readonly on?: readonly string[];
  /** Events that cancel its live runs (see {@link WorkflowDefinition.cancelOn}). */
  readonly cancelOn?: readonly CancelOn[];
  /** The `defineEvent` types its `on` and `cancelOn` name, registered with the engine for payload checks. */
  readonly events?: readonly EventDefinition[];
  run(ctx: WorkflowContext, input: I): Promise<O>;
}

/** A cancel trigger, as a workflow holds it: the event type and the payload path to match on. */
export interface CancelOn {
  event: string;
  /** A field (or dotted path) that must be equal in the run's input and the event's payload; absent: any event of the type cancels every live run. */
  match?: string;
}

/** What {@link defineWorkflow} takes. */
export interface WorkflowDefinition<I, O> {
  name: string;
  /** Runs are pinned to the version they started on and only resumed by code of that version. Default "1". */
  version?: string;
  /**
   * The queue its runs join unless `engine.start(…, { queue })` says otherwise (flow control:
   * concurrency, per-key concurrency and rate limits declared in `createEngine({ queues })`).
   * See docs/operations/flow-control.md.
   */
  queue?: string;
  /**
   * Event types that start a run: `engine.publishEvent(type, payload, { eventId })` (or `POST /events`,
   * or a webhook without a run) starts one run of this workflow per event id, with the payload as input
   * and run id `<workflow name>:<eventId>`. See docs/operations/events.md.
   */
  on?: string | EventDefinition | readonly (string | EventDefinition)[];
  /**
   * Events that cancel a live (pending, running or suspended) run of this workflow: a published event
   * of the type whose payload field `match` equals the run input's field of the same path.
   * @example
   * cancelOn: [{ event: "order.cancelled", match: "orderId" }]
   */
  cancelOn?: readonly { event: string | EventDefinition; match?: string }[];
  run(ctx: WorkflowContext, input: I): Promise<O>;
}

/** An answer to a human request raised by a step (see `engine.respondToHuman`). */
export type { HumanAnswer };
