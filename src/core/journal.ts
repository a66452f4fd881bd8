import { encode, type SerializedError } from "./serialize.js";

/**
 * Every kind of journal entry, with the data it carries. The journal is the
 * source of truth; the run row is a projection of it (see {@link projectEntry}).
 */
export interface EntryData {
  /** seq 1 of every run. */
  "run.created": {
    workflow: string;
    version: string;
    input: unknown;
    parentRunId?: string;
    parentOpKey?: string;
    /** The run's tags (`engine.start(…, { tags })`, or inherited from its parent or the run it continues). */
    tags?: Record<string, string>;
    /** The run this one continues (`ctx.continueAsNew`). */
    continuedFrom?: string;
    /** A delayed start: the run is suspended until then (a durable timer, `run.suspended` follows at seq 2). */
    startAt?: number;
    /** When the run is cancelled with reason "deadline" unless it has finished (a durable timer). */
    deadlineAt?: number;
  };
  /** A worker took the run (from pending, suspended, or an expired lease). */
  "run.claimed": { workerId: string; epoch: number; from: string };
  /**
   * A worker gave the run back without finishing it. `stopped`: it was shutting down (a drain or a
   * stop), so the attempt is not a failed recovery (dead-letter); absent: it abandoned the run on an error.
   */
  "run.released": { workerId: string; stopped?: boolean };
  "run.suspended": { wakeAt: number | null; waitingFor: WaitDescriptor[] };
  "run.completed": { output: unknown };
  "run.failed": { error: SerializedError };
  "run.cancelled": { reason?: string };
  /**
   * `ctx.continueAsNew`: the run ended (status `completed`, output null) and run `nextRunId` of the same
   * workflow starts with `input`. The commit of this entry creates that run, so the chain never breaks
   * and never forks, even when a worker dies around it.
   */
  "run.continued": { nextRunId: string; workflow: string; version: string; input: unknown; tags?: Record<string, string> };
  "run.retried": { failedSteps: string[] };
  /**
   * Dead-letter: the run's last `failures` attempts ended without progress (see `maxRecoveryAttempts`);
   * it is not claimed again until retried. `error` says how the last attempt ended.
   */
  "run.dead": { failures: number; error: SerializedError };
  /**
   * The last entry a fork copies (`engine.fork`): the entries before it are run `fromRunId`'s
   * seqs 2…`atSeq`, verbatim except the step result at `patchedSeq`, if any. The run is pending again.
   * `fromVersion`: the original's workflow version, when the fork runs under another (the current code).
   */
  "run.forked": { fromRunId: string; atSeq: number; patchedSeq?: number; fromVersion?: string };
  /** A debounced start (flow control): the run, not started yet, now starts at `startAt` with this input. */
  "run.debounced": { input: unknown; startAt: number };
  /** A step's intent; `intent` is what the caller asked to journal with it (e.g. a tool call's argument hash). */
  /**
   * `compensable`: the step has a `compensate`. If the run unwinds while this intent has no outcome (a
   * cancel fenced the step out mid-flight), its effect may have happened, so it is compensated too.
   */
  "step.started": { attempt: number; recovered?: boolean; intent?: unknown; compensable?: true };
  /**
   * `text`: what `StepOptions.searchText` made of the result, indexed for `ctx.searchJournal`.
   * `secret`: the step was marked `StepOptions.secret`; journal views show its result redacted.
   */
  "step.completed": {
    result: unknown;
    attempt: number;
    via?: "reconcile" | "human";
    text?: string;
    secret?: true;
    /** The step has a `compensate`: completing it registered that compensation (sagas, `engine/saga.ts`). */
    compensable?: true;
    /** The step acquired a resource (`ctx.acquire`): the engine releases it by a terminal state at the latest. */
    resource?: true;
  };
  "step.failed": { attempt: number; error: SerializedError; final: boolean; retryAt?: number };
  /** How an intent without an outcome was resolved after a crash. */
  "step.reconciled": { action: "rerun" | "completed" | "failed"; via: "effect" | "reconcile" | "compensate" | "human"; attempt: number };
  "sleep.started": { wakeAt: number };
  "sleep.completed": Record<string, never>;
  "event.waiting": { type: string; timeoutAt: number | null; match?: Record<string, unknown> };
  "event.received": { type: string; eventId: string; payload: unknown; inboxId: number };
  "event.timedout": Record<string, never>;
  /** `flow`: the queue the child joins (its workflow's default queue), when it has one. */
  "child.started": {
    childRunId: string;
    workflow: string;
    version: string;
    input: unknown;
    flow?: { queue: string; concurrencyKey: string | null; priority: number };
    /** The tags the child gets: its parent's (inherited). */
    tags?: Record<string, string>;
  };
  "child.completed": { output: unknown };
  /** `status` is how the child ended, or "conflict" when the id named a run that is not this op's child. */
  "child.failed": { error: SerializedError; status: string };
  /** A journaled `now()`, `random()` or `uuid()`. */
  "value.recorded": { value: unknown };
  /** A `ctx.publish`: the run's latest value under `name` (its commit replaces the row clients read). */
  "publish.value": { name: string; value: unknown };
  /** A `ctx.handle` handler's reply to request `requestId` (its commit stores it for the caller): a value or an error. */
  "request.replied": { name: string; requestId: string; reply?: unknown; error?: SerializedError };
  /** A `ctx.emit`: the message (its outbox row is inserted in the same transaction as this entry). */
  "outbox.emitted": { topic: string; payload: unknown; messageId: string };
  /** A question for a person: from `ctx.askHuman`, or "did this happen?" about an unsafe step. */
  /** `secret`: answers are secret (`askHuman({ secret: true })`); views redact their value and message. */
  "human.requested": {
    requestId: string;
    question: string;
    options: string[];
    timeoutAt: number | null;
    context?: unknown;
    input?: unknown;
    secret?: true;
    /** Answers that need a note (`message`): every one (`true`) or those choosing these options. */
    requireNote?: true | string[];
    /** Set when this request re-asks because the input schema refused the answer to the previous one. */
    refused?: { requestId: string; message: string };
  };
  /**
   * The answer, consumed from the inbox. `reply: true` when it is the outcome of a `ctx.askHuman`;
   * `parsed`: the value the input schema made of it, when that differs (a transform); `refused`:
   * the input schema refused it (why), so it was not delivered and the question was asked again.
   */
  "human.answered": { requestId: string; answer: HumanAnswer; inboxId: number; reply?: boolean; parsed?: unknown; refused?: string };
  /** A `ctx.askHuman` expired unanswered and escalated as declared: failed, cancelled the run, or chose `option`. */
  "human.timedout": { requestId: string; escalation: "fail" | "cancel" | "choose"; option?: string; value?: unknown; notify?: HumanNotice };
  /** A `ctx.askHuman` expired and was given more time (`onTimeout.extend`): it now times out at `timeoutAt`. */
  "human.extended": { requestId: string; timeoutAt: number; extension: number; notify?: HumanNotice };
  /** `ctx.loop` entered; iterations' ops are keyed `<loopKey>/<iteration>/<name>#k`. */
  "loop.started": { snapshotEvery: number };
  /**
   * The loop's state before `iteration`. Supersedes the entries from `from` (the one after
   * `loop.started`) up to itself, except `keep`: a resume starts from here (core/resume.ts).
   */
  "loop.snapshot": { iteration: number; state: unknown; from: number; keep: number[] };
  /** The loop's result after `iterations`; supersedes all of its iterations like a snapshot. */
  "loop.completed": { result: unknown; iterations: number; from: number; keep: number[] };
  /**
   * `engine.cancel` of a run holding registered compensations or unreleased resources: the run is
   * runnable again so that a worker replays it, compensates and releases, then ends it.
   */
  "run.cancelling": { reason?: string };
  /**
   * The saga is being unwound: the registered compensations run in reverse order. `reason` says why
   * (the run failed, was cancelled, or the workflow called `ctx.compensate`); `error` is that cause.
   */
  "saga.compensating": { reason: "failed" | "cancelled" | "requested"; error: SerializedError };
  /** Intent of one compensation attempt; the op key is the compensated step's. */
  "compensation.started": { attempt: number };
  "compensation.completed": { attempt: number };
  "compensation.failed": { attempt: number; error: SerializedError; final: boolean };
  /** Every compensation ran: the run ends `compensated`; `error` is what made it compensate. */
  "run.compensated": { error: SerializedError };
  /** A compensation failed for good: the run ends `compensation_failed`; `error` names it, `cause` is why the saga unwound. */
  "run.compensation_failed": { error: SerializedError; cause: SerializedError };
  /** Intent of one release attempt of a resource; the op key is its acquisition's. `by`: the workflow's `release()` or the engine at a terminal state. */
  /**
   * `by`: the workflow's `handle.release()`, the engine at the run's (or a loop iteration's) end, or
   * `resume`: a resume released a resource a loop iteration held when its worker stopped, before acquiring it again.
   */
  "resource.releasing": { attempt: number; by: "workflow" | "engine" | "resume" };
  "resource.released": { attempt: number; by: "workflow" | "engine" | "resume" };
  "resource.release_failed": { attempt: number; error: SerializedError; final: boolean; by: "workflow" | "engine" | "resume" };
  /**
   * An agent appended messages to its transcript, and made or answered tool calls. Projected, in the
   * same transaction, onto the `agent_messages` and `tool_calls` rows (core/store/agent-rows.ts), which
   * a resume reads its context window from instead of carrying the transcript in loop snapshots.
   */
  "agent.messages": { messages: AgentMessageRecord[]; toolCalls?: ToolCallRecord[] };
}

/** One message of an `agent.messages` entry: `seq` numbers an agent run's messages 1, 2, … (not journal seqs). */
export interface AgentMessageRecord {
  seq: number;
  /** The loop iteration (turn index, from 0) that appended it. */
  turn: number;
  role: "user" | "assistant" | "tool";
  /** `summary`: a summary of earlier messages that replaced them in the context window. */
  kind?: "summary";
  /** The message's content, as the model adapters take it (text or blocks). */
  content: unknown;
}

/** A tool call of an `agent.messages` entry: made (`called`, with its arguments) or answered (with its result). */
export interface ToolCallRecord {
  /** The key the tool call runs under (`<runId>:tool:<turn>:<callId>`), unique in the run. */
  idempotencyKey: string;
  callId: string;
  tool: string;
  turn: number;
  status: "called" | "completed" | "failed";
  /**
   * With `called`: the arguments the model sent. Written only by runs journaled before decision 0007;
   * since then the arguments are read from the entry's `tool_use` block with this call id.
   */
  args?: unknown;
  /**
   * With `completed` / `failed`: what the model was told. Written only by runs journaled before
   * decision 0007; since then it is read from the entry's `tool_result` block for this call id.
   */
  result?: unknown;
}

/** The kind of a journal entry. */
export type EntryKind = keyof EntryData;

/** What a suspended run waits for (shown by `cairn show` and the API). */
export type WaitDescriptor =
  | { kind: "timer"; opKey: string; wakeAt: number }
  | { kind: "retry"; opKey: string; wakeAt: number }
  /** A step waiting for a flow-control slot (rate limit or concurrency per key); `ahead` waiters are before it. */
  | { kind: "flow"; opKey: string; wakeAt: number; ahead: number }
  | { kind: "event"; opKey: string; type: string; timeoutAt: number | null }
  | { kind: "child"; opKey: string; childRunId: string }
  | { kind: "human"; opKey: string; requestId: string; timeoutAt: number | null };

/**
 * The outbox message a `human.extended` / `human.timedout` entry inserts in its own commit, when the
 * `ctx.askHuman` declared `notify` (store/common/plan-write `insert-outbox`).
 */
export interface HumanNotice {
  topic: string;
  /** `<requestId>:extended:<n>` or `<requestId>:timedout`: stable, so a consumer can deduplicate. */
  messageId: string;
  payload: unknown;
}

/** An answer to a human request. For "did this happen?" requests: retry, skip (with the step's value) or fail. */
export interface HumanAnswer {
  action: "retry" | "skip" | "fail" | "answer";
  /** With "answer": the option chosen, one of the request's options. */
  option?: string;
  value?: unknown;
  message?: string;
  by?: string;
}

/** A journal entry as stored. `payload` is the encoded {@link EntryData} for its kind. */
export interface JournalEntry {
  runId: string;
  seq: number;
  kind: EntryKind;
  opKey: string | null;
  payload: string;
  /** The lease epoch of the writer. */
  epoch: number;
  /** Epoch milliseconds when it was written. */
  at: number;
}

/** An entry about to be appended: data is kept decoded for projection, payload is encoded once. */
export interface NewEntry<K extends EntryKind = EntryKind> {
  kind: K;
  opKey: string | null;
  data: EntryData[K];
  payload: string;
}

/** Builds a {@link NewEntry}, encoding its payload once. */
export function newEntry<K extends EntryKind>(kind: K, opKey: string | null, data: EntryData[K]): NewEntry<K> {
  return { kind, opKey, data, payload: encode(data) };
}

/** Op kinds, as determinism checks compare them. */
export type OpKind = "step" | "sleep" | "event" | "child" | "value" | "human" | "loop" | "emit" | "publish" | "request" | "messages";

/** The op kind an entry belongs to, or null for run-level entries. */
export function opKindOf(kind: EntryKind): OpKind | null {
  const prefix = kind.slice(0, kind.indexOf("."));
  switch (prefix) {
    case "step":
    case "sleep":
    case "event":
    case "child":
    case "human":
    case "loop":
    case "publish":
    case "request":
      return prefix;
    case "value":
      return "value";
    case "outbox":
      return "emit";
    case "agent":
      return "messages";
    default:
      return null;
  }
}

/**
 * Entries that deliver an outcome to workflow code. On replay they are delivered
 * in journal order, one at a time, exactly as they were live.
 */
export function isOutcome(kind: EntryKind, data: unknown): boolean {
  switch (kind) {
    case "step.completed":
    case "sleep.completed":
    case "event.received":
    case "event.timedout":
    case "child.completed":
    case "child.failed":
    case "loop.completed":
    case "human.timedout":
    case "outbox.emitted":
    case "publish.value":
    case "request.replied":
      return true;
    case "human.answered":
      return (data as EntryData["human.answered"]).reply === true;
    case "step.failed":
      return (data as EntryData["step.failed"]).final;
    default:
      return false;
  }
}

/** Builds an op key: `name#k`. */
export function opKey(name: string, occurrence: number): string {
  return `${name}#${occurrence}`;
}
