import { z } from "zod";
import { toMs, type Duration } from "./duration.js";
import { ValidationError } from "./errors.js";

/**
 * Flow control of steps (docs/operations/flow-control.md, "Per key and per step"): limits shared by
 * every run and every worker process on one store, counted in the store. A bucket is one limit's
 * counter, named `<kind>:<name>:<key>` (the step's name, or the name given, and the key, e.g. a tenant).
 */

/** Options of a rate limit: at most `limit` starts of the step per `period`, per `key`. */
export interface StepRateLimit {
  /** What the limit counts per, e.g. a tenant id. Default: one limit for everyone. */
  key?: string;
  limit: number;
  period: Duration;
  /** The limit's name: steps (in any workflow) with the same name and key share it. Default: the step's name. */
  name?: string;
}

/** Options of a concurrency limit: at most `limit` attempts of the step running at once, per `key`. */
export interface StepConcurrency {
  /** What the limit counts per, e.g. a tenant id. Default: one limit for everyone. */
  key?: string;
  limit: number;
  /** The limit's name: steps (in any workflow) with the same name and key share it. Default: the step's name. */
  name?: string;
}

/** Flow control options of a step (`ctx.step(name, fn, { rateLimit, concurrency })`). */
export interface StepFlowOptions {
  rateLimit?: StepRateLimit;
  concurrency?: StepConcurrency;
}

/** One limit a slot request must pass, as the store sees it. */
export interface StepFlowLimit {
  bucket: string;
  kind: "rate" | "concurrency";
  limit: number;
  /** Rate limits: the window, ms. */
  periodMs?: number;
}

/** A request for the slots of one step attempt (`Store.acquireStepSlots`). */
export interface StepSlotRequest {
  runId: string;
  opKey: string;
  /** The run's lease epoch: a concurrency slot is held while the run is running at this epoch with a live lease. */
  epoch: number;
  limits: StepFlowLimit[];
}

/** The store's answer: granted, or where the run stands and when to look again (null: when a slot is released). */
export type StepSlotGrant = { granted: true } | { granted: false; retryAt: number | null; ahead: number };

/** What a store counted for one bucket, in the request's transaction. */
export interface BucketState {
  /** Concurrency: slots held by live holders other than this op. Rate: starts within the window. */
  used: number;
  /** Waiters queued before this op (all of them when it is not queued yet). */
  ahead: number;
  /** Concurrency: the earliest lease expiry among holders. Rate: when the oldest start leaves the window. */
  nextFree: number | null;
}

/** A waiter polls at least this often, so a missed wake-up costs at most this delay. */
export const STEP_FLOW_MAX_WAIT_MS = 30_000;

/**
 * The grant rule, shared by every store: the op gets its slots when, for every limit, fewer than
 * `limit - used` waiters are ahead of it (first come, first served); otherwise it waits until the
 * earliest time something may free, or a release wakes it.
 */
export function decideSlots(limits: readonly StepFlowLimit[], states: readonly BucketState[], now: number): StepSlotGrant {
  let ok = true;
  let retryAt: number | null = null;
  let ahead = 0;
  limits.forEach((limit, i) => {
    const state = states[i]!;
    ahead = Math.max(ahead, state.ahead);
    if (state.ahead < limit.limit - state.used) return;
    ok = false;
    if (state.nextFree !== null && (retryAt === null || state.nextFree < retryAt)) retryAt = state.nextFree;
  });
  if (ok) return { granted: true };
  return { granted: false, retryAt: Math.min(retryAt ?? Infinity, now + STEP_FLOW_MAX_WAIT_MS), ahead };
}

const NAME = z.string().min(1).max(128);
const KEY = z.string().min(1).max(256);
const rateSchema = z
  .object({ key: KEY.optional(), limit: z.number().int().min(1).max(1_000_000), period: z.union([z.number(), z.string()]), name: NAME.optional() })
  .strict();
const concurrencySchema = z.object({ key: KEY.optional(), limit: z.number().int().min(1).max(100_000), name: NAME.optional() }).strict();

/**
 * The limits of a step's options, with their buckets; empty when it has none. Throws ValidationError
 * naming the bad option (a key must be a non-empty string: derive it from the input, e.g. `input.tenantId`).
 */
export function stepFlowLimits(step: string, options: StepFlowOptions): StepFlowLimit[] {
  const limits: StepFlowLimit[] = [];
  if (options.rateLimit !== undefined) {
    const parsed = rateSchema.safeParse(options.rateLimit);
    if (!parsed.success)
      throw new ValidationError(
        `ctx.step("${step}"): rateLimit must be { key?: non-empty string, limit: whole number ≥ 1, period: duration, name? } (${parsed.error.issues[0]?.message}).`,
      );
    let periodMs: number;
    try {
      periodMs = toMs(parsed.data.period as Duration);
    } catch (error) {
      throw new ValidationError(`ctx.step("${step}"): rateLimit.period: ${(error as Error).message}`);
    }
    if (periodMs < 1) throw new ValidationError(`ctx.step("${step}"): rateLimit.period must be at least 1ms.`);
    limits.push({ bucket: bucketOf("rate", parsed.data.name ?? step, parsed.data.key), kind: "rate", limit: parsed.data.limit, periodMs });
  }
  if (options.concurrency !== undefined) {
    const parsed = concurrencySchema.safeParse(options.concurrency);
    if (!parsed.success)
      throw new ValidationError(
        `ctx.step("${step}"): concurrency must be { key?: non-empty string, limit: whole number ≥ 1, name? } (${parsed.error.issues[0]?.message}).`,
      );
    limits.push({ bucket: bucketOf("concurrency", parsed.data.name ?? step, parsed.data.key), kind: "concurrency", limit: parsed.data.limit });
  }
  return limits;
}

function bucketOf(kind: string, name: string, key: string | undefined): string {
  return `${kind}:${name}:${key ?? ""}`;
}
