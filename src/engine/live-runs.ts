import { randomUUID } from "node:crypto";
import { CairnError, RequestFailedError, RunFinishedError, RunNotFoundError, ValidationError } from "../core/errors.js";
import { toMs, type Duration } from "../core/duration.js";
import type { RunRecord } from "../core/run.js";
import { isTerminal } from "../core/run.js";
import { eventIdSchema, describeIssues } from "../core/schemas.js";
import { decode, type SerializedError } from "../core/serialize.js";
import type { Store } from "../core/store.js";
import type { ChainStore } from "./live-ops.js";
import { checkTags } from "../core/tags.js";
import { checkLiveName, continuedFrom, continuedTo, followChain, requestEventType, type RequestEnvelope } from "./live-ops.js";

/**
 * The engine's side of live runs (docs/live-runs.md): start options (tags, deadline, delayed start),
 * published values, requests, run links and the deadline sweeper. create-engine.ts calls these.
 */

/** The longest delay or deadline accepted: 10 years. */
const MAX_AHEAD_MS = 10 * 365 * 24 * 3_600_000;

/** What `engine.start` options add to the new run. */
export interface StartExtras {
  tags?: Record<string, string>;
  deadlineAt?: number;
  startAt?: number;
}

/** The start options this file reads (see `StartOptions` in engine.ts). */
export interface LiveStartOptions {
  tags?: Record<string, string>;
  deadline?: Duration | Date;
  startAt?: Date | number;
  delay?: Duration;
}

function ahead(value: Duration | Date | number, now: number, what: string, absoluteNumbers: boolean): number {
  let at: number;
  if (value instanceof Date) at = value.getTime();
  else if (typeof value === "number" && absoluteNumbers) at = value;
  else {
    try {
      at = now + toMs(value as Duration);
    } catch (error) {
      throw new ValidationError(`start: ${what}: ${(error as Error).message}`);
    }
  }
  if (!Number.isFinite(at)) throw new ValidationError(`start: ${what} must be a valid date or duration.`);
  if (at - now > MAX_AHEAD_MS) throw new ValidationError(`start: ${what} is more than 10 years away.`);
  return at;
}

/**
 * Validates the live-run start options; returns what the new run carries. `deadline` is a duration
 * from now or a Date; `startAt` a Date or epoch ms; `delay` a duration (not with `startAt`). A deadline
 * of a delayed run counts from its start.
 */
export function startExtras(options: LiveStartOptions, now: number): StartExtras {
  const extras: StartExtras = {};
  if (options.tags !== undefined) extras.tags = checkTags(options.tags, "start");
  if (options.startAt !== undefined && options.delay !== undefined) throw new ValidationError("start: give startAt or delay, not both.");
  if (options.startAt !== undefined) extras.startAt = ahead(options.startAt, now, "startAt", true);
  if (options.delay !== undefined) extras.startAt = ahead(options.delay, now, "delay", false);
  if (options.deadline !== undefined) {
    const from = options.deadline instanceof Date ? now : (extras.startAt ?? now);
    extras.deadlineAt = ahead(options.deadline, from, "deadline", false);
  }
  if (extras.tags && Object.keys(extras.tags).length === 0) delete extras.tags;
  return extras;
}

/** A value a run published (`ctx.publish`), as `engine.getPublished` returns it. */
export interface PublishedValue<T = unknown> {
  value: T;
  /** The seq of the journal entry that published it. */
  seq: number;
  at: Date;
}

/** See `Engine.getPublished`. */
export async function readPublished<T>(store: Pick<Store, "getRunValue" | "getRun">, runId: string, name: string): Promise<PublishedValue<T> | undefined> {
  checkLiveName(name, "getPublished");
  const row = await store.getRunValue(runId, "published", name);
  if (row) return { value: decode<T>(row.value), seq: row.seq, at: new Date(row.at) };
  if (!(await store.getRun(runId))) throw new RunNotFoundError(runId);
  return undefined;
}

/** Options of `engine.request`. */
export interface RequestOptions {
  /** The idempotency key: a request with an id the run already answered returns that reply, the handler does not run again. Default: a new UUID. */
  requestId?: string;
  /** How long to wait for the reply (ms). Default 30 000. The request stays delivered: ask again with the same id to get its reply later. */
  timeoutMs?: number;
}

/** What `engine.request` needs of the engine. */
export interface RequestDeps {
  store: Pick<Store, "getRunValue" | "getRun" | "readJournal">;
  clock: () => number;
  sendEvent(runId: string, type: string, payload: unknown, options: { eventId: string }): Promise<unknown>;
  /** Resolves when something about the run may have changed, or after `ms`. */
  waitForChange(runId: string, ms: number): Promise<unknown>;
}

/**
 * See `Engine.request`: delivers the request to the run's inbox (idempotent by request id), then waits
 * for the reply its `ctx.handle` handler journaled (one indexed read per poll; woken early by this
 * engine's workers).
 */
export async function sendRequest<R>(deps: RequestDeps, runId: string, name: string, payload: unknown, options: RequestOptions = {}): Promise<R> {
  checkLiveName(name, "request");
  const requestId = options.requestId ?? randomUUID();
  const parsedId = eventIdSchema.safeParse(requestId);
  if (!parsedId.success) throw new ValidationError(`request: requestId ${describeIssues(parsedId.error)}.`);
  const timeoutMs = options.timeoutMs ?? 30_000;
  if (!Number.isFinite(timeoutMs) || timeoutMs < 0) throw new ValidationError("request: timeoutMs must be a number of milliseconds, 0 or more.");
  const answered = await readReply<R>(deps.store, runId, requestId);
  if (answered) return answered.value;
  // A run that continued as new: the request goes to the last run of its chain, which replies.
  const named = await deps.store.getRun(runId);
  if (named?.status === "completed") runId = (await followChain(deps.store, named)).runId;
  const envelope: RequestEnvelope = { requestId, payload: payload ?? null };
  await deps.sendEvent(runId, requestEventType(name), envelope, { eventId: requestId });
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const reply = await readReply<R>(deps.store, runId, requestId);
    if (reply) return reply.value;
    const run = await deps.store.getRun(runId);
    if (!run) throw new RunNotFoundError(runId);
    // The run may have replied in the commit that ended it: read once more before giving up.
    if (isTerminal(run.status)) {
      const last = await readReply<R>(deps.store, runId, requestId);
      if (last) return last.value;
      throw new RunFinishedError(runId, run.status, `get a reply to request "${requestId}" (the run ended before its handler "${name}" replied)`);
    }
    const left = deadline - Date.now();
    if (left <= 0)
      throw new CairnError(
        "TIMEOUT",
        `Run "${runId}" has not replied to request "${requestId}" within ${timeoutMs}ms; it stays delivered: ask again with the same requestId to get the reply.`,
      );
    await deps.waitForChange(runId, Math.min(left, 50));
  }
}

async function readReply<R>(store: Pick<Store, "getRunValue" | "getRun">, runId: string, requestId: string): Promise<{ value: R } | undefined> {
  const row = await store.getRunValue(runId, "reply", requestId);
  if (!row) return undefined;
  const stored = decode<{ reply?: R; error?: SerializedError }>(row.value);
  if (stored.error) throw new RequestFailedError(runId, requestId, stored.error);
  return { value: stored.reply as R };
}

/** The links of a run: tags, the run it continued, the run it continued as. */
export async function runLinks(
  store: ChainStore & Pick<Store, "getRunTags">,
  run: RunRecord,
): Promise<{ tags: Record<string, string>; continuedFrom?: string; continuedTo?: string }> {
  const [tags, from, to] = await Promise.all([store.getRunTags(run.runId), continuedFrom(store, run.runId), continuedTo(store, run)]);
  return { tags, ...(from === undefined ? {} : { continuedFrom: from }), ...(to === undefined ? {} : { continuedTo: to }) };
}

/**
 * Cancels runs whose deadline fell due (reason "deadline"), polling the store's deadline rows, so a
 * deadline fires even when every worker was down at the time: the first worker up cancels the run.
 * Each engine with a worker runs one.
 */
export class DeadlineSweeper {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = false;

  constructor(
    private readonly store: Pick<Store, "listDueDeadlines" | "clearDeadline" | "now">,
    private readonly clock: () => number,
    private readonly cancel: (runId: string) => Promise<unknown>,
    private readonly onError: (error: unknown) => void,
    private readonly pollMs: number,
  ) {
    this.schedule(0);
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.sweep()
        .then(() => undefined, this.onError)
        .finally(() => {
          this.running = null;
          this.schedule(this.pollMs);
        });
    }, ms);
    this.timer.unref();
  }

  /** Cancels every run whose deadline is due now; returns how many it cancelled. */
  async sweep(): Promise<number> {
    let cancelled = 0;
    for (;;) {
      const now = this.store.now ? await this.store.now() : this.clock();
      const due = await this.store.listDueDeadlines(now, 100);
      for (const { runId } of due) {
        try {
          await this.cancel(runId);
          cancelled += 1;
        } catch (error) {
          if (!(error instanceof RunFinishedError)) throw error;
        }
        await this.store.clearDeadline(runId);
      }
      if (due.length < 100 || this.stopped) return cancelled;
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }
}
