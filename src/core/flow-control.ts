import { z } from "zod";
import { durationSchema, type Duration } from "./duration.js";
import { ValidationError } from "./errors.js";
import { describeIssues } from "./schemas.js";

/**
 * Limits of one named queue, as declared on the engine:
 * `createEngine({ queues: { llm: { concurrency: 8, perKeyConcurrency: 2, rateLimit: { limit: 60, per: "1m" } } } })`.
 * Every limit is enforced by the store when a worker claims, across all workers and processes.
 * Only runs held by a worker (status `running`) count; suspended runs free their slot.
 */
export interface QueueOptions {
  /** At most this many runs of the queue run at once, everywhere. Default: no limit. */
  concurrency?: number;
  /** At most this many runs with the same `concurrencyKey` run at once, everywhere. Default: no limit. */
  perKeyConcurrency?: number;
  /** At most `limit` runs of the queue start (are first claimed) in any window of `per`. Default: no limit. */
  rateLimit?: { limit: number; per: Duration };
}

/** Flow-control options of one start: `engine.start(wf, input, { queue: "llm", concurrencyKey: customerId, priority: 10 })`. */
export interface FlowOptions {
  /** The queue the run belongs to (declared in `createEngine({ queues })`). Default: the workflow's `queue`, else none. */
  queue?: string;
  /** Runs of a queue with the same key share the queue's `perKeyConcurrency` limit (e.g. a customer id). Needs a queue. */
  concurrencyKey?: string;
  /** Higher is claimed first within the queue; FIFO within a priority. Integer in [-1000, 1000], default 0. Needs a queue. */
  priority?: number;
}

/**
 * Debounce by key: `engine.start(wf, input, { debounce: { key: "doc-42", period: "5s" } })`. While a run of the
 * workflow with this key has not started yet, another start with the key does not create a run: it replaces
 * that run's input (last input wins) and moves its start to `period` from now. The run starts once `period`
 * passes without a new start with the key.
 */
export interface DebounceOptions {
  /** What makes starts the same (per workflow), e.g. a document id. 1–256 characters. */
  key: string;
  /** How long to wait for quiet before starting. At least 1ms, at most 30 days. */
  period: Duration;
}

/** Zod schema of {@link DebounceOptions}; `period` parses to milliseconds. */
export const debounceSchema = z.strictObject({
  key: z.string().min(1, "must not be empty").max(256, "must be at most 256 characters"),
  period: durationSchema.refine((ms) => ms >= 1 && ms <= 30 * 86_400_000, "must be between 1ms and 30d"),
});

/** True when claiming `run` starts it (it never ran, or was retried): what a rate limit counts. */
export function isStart(run: { status: string; leaseEpoch: number }): boolean {
  return run.status === "pending" || run.leaseEpoch === 0;
}

/** A queue's limits as the store enforces them (durations in ms, `null` = no limit). */
export interface QueueLimits {
  name: string;
  concurrency: number | null;
  perKeyConcurrency: number | null;
  rateLimit: { limit: number; perMs: number } | null;
}

/** How many runs of one queue and concurrency key are running, waiting for a slot, or suspended (`Store.queueStats`). */
export interface QueueStat {
  queue: string;
  /** Null groups the runs without a key. */
  concurrencyKey: string | null;
  /** Held by a worker: these take the slots. */
  running: number;
  /** Runnable (pending, or suspended and due) but not claimed yet: waiting for a slot or a worker. */
  waiting: number;
  /** Suspended and not due (sleeping, waiting for an event, a person or a child): no slot. */
  suspended: number;
}

/** The flow-control columns of a run: its queue, concurrency key and priority. */
export interface RunFlow {
  queue: string;
  concurrencyKey: string | null;
  priority: number;
}

/** Zod schema of a queue name: 1–128 letters, digits, `_ . : -`. */
export const queueNameSchema = z
  .string()
  .min(1, "must not be empty")
  .max(128, "must be at most 128 characters")
  .regex(/^[A-Za-z0-9_.:-]+$/, "use letters, digits, '_', '.', ':' or '-'");

const limitSchema = z.number().int("must be an integer").min(1, "must be at least 1").max(1_000_000, "must be at most 1000000");

/** Zod schema of {@link QueueOptions}. */
export const queueOptionsSchema = z.strictObject({
  concurrency: limitSchema.optional(),
  perKeyConcurrency: limitSchema.optional(),
  rateLimit: z.strictObject({ limit: limitSchema, per: durationSchema.refine((ms) => ms >= 1, "must be at least 1ms") }).optional(),
});

/** Zod schema of the engine's `queues` option: queue name → {@link QueueOptions}. */
export const queuesSchema = z.record(queueNameSchema, queueOptionsSchema);

/** Zod schema of {@link FlowOptions}, shared by `engine.start`, the HTTP API and the CLI. */
export const flowOptionsSchema = z.strictObject({
  queue: queueNameSchema.optional(),
  concurrencyKey: z.string().min(1, "must not be empty").max(256, "must be at most 256 characters").optional(),
  priority: z.number().int("must be an integer").min(-1000, "must be at least -1000").max(1000, "must be at most 1000").optional(),
});

/**
 * Parses the engine's `queues` option into the limits the store enforces.
 * @throws ValidationError naming the bad queue and field.
 */
export function parseQueues(queues: unknown): QueueLimits[] {
  if (queues === undefined) return [];
  const parsed = queuesSchema.safeParse(queues);
  if (!parsed.success) throw new ValidationError(`createEngine: invalid queues: ${describeIssues(parsed.error)}`);
  return Object.entries(parsed.data).map(([name, q]) => ({
    name,
    concurrency: q.concurrency ?? null,
    perKeyConcurrency: q.perKeyConcurrency ?? null,
    rateLimit: q.rateLimit ? { limit: q.rateLimit.limit, perMs: q.rateLimit.per } : null,
  }));
}

/**
 * The flow of a new run from the start options and the workflow's default queue, checked against the declared queues.
 * Returns undefined for a run without a queue.
 * @throws ValidationError when an option is malformed, the queue is not declared, or a key or priority is given without a queue.
 */
export function resolveFlow(options: FlowOptions, defaultQueue: string | undefined, declared: readonly QueueLimits[], where: string): RunFlow | undefined {
  const picked = { queue: options.queue, concurrencyKey: options.concurrencyKey, priority: options.priority };
  const parsed = flowOptionsSchema.safeParse(Object.fromEntries(Object.entries(picked).filter(([, v]) => v !== undefined)));
  if (!parsed.success) throw new ValidationError(`${where}: ${describeIssues(parsed.error)}`);
  const queue = parsed.data.queue ?? defaultQueue;
  if (queue === undefined) {
    if (parsed.data.concurrencyKey !== undefined || parsed.data.priority !== undefined) {
      throw new ValidationError(`${where}: concurrencyKey and priority need a queue: pass { queue } or declare the workflow's queue.`);
    }
    return undefined;
  }
  if (!declared.some((q) => q.name === queue)) {
    const known = declared.map((q) => `"${q.name}"`).join(", ") || "none";
    throw new ValidationError(`${where}: unknown queue "${queue}" (declared: ${known}); declare it in createEngine({ queues: { "${queue}": { … } } }).`);
  }
  return { queue, concurrencyKey: parsed.data.concurrencyKey ?? null, priority: parsed.data.priority ?? 0 };
}

/**
 * How many more runs of a queue a claim may take, given what runs and started already:
 * the free global slots, and the starts the rate limit still allows (`Infinity` for no limit).
 */
export function queueAllowance(limits: QueueLimits, running: number, startedInWindow: number): { slots: number; starts: number } {
  return {
    slots: limits.concurrency === null ? Infinity : Math.max(0, limits.concurrency - running),
    starts: limits.rateLimit === null ? Infinity : Math.max(0, limits.rateLimit.limit - startedInWindow),
  };
}

/**
 * Picks, in order, the candidates a claim may take from one queue: at most `slots` of them, at most `starts`
 * of those that start ({@link isStart}), and at most `perKeyConcurrency` running per key counting `runningByKey`.
 * Shared by the three stores so they decide alike.
 */
export function pickQueued<T extends { status: string; leaseEpoch: number; concurrencyKey: string | null }>(
  candidates: readonly T[],
  limits: QueueLimits,
  allowance: { slots: number; starts: number },
  runningByKey: ReadonlyMap<string, number>,
  max: number,
): T[] {
  const picked: T[] = [];
  const byKey = new Map(runningByKey);
  let starts = allowance.starts;
  const room = Math.min(allowance.slots, max);
  for (const run of candidates) {
    if (picked.length >= room) break;
    const start = isStart(run);
    if (start && starts <= 0) continue;
    if (run.concurrencyKey !== null && limits.perKeyConcurrency !== null) {
      const held = byKey.get(run.concurrencyKey) ?? 0;
      if (held >= limits.perKeyConcurrency) continue;
      byKey.set(run.concurrencyKey, held + 1);
    }
    if (start) starts--;
    picked.push(run);
  }
  return picked;
}
