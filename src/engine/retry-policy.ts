import { z } from "zod";
import { durationSchema } from "../core/duration.js";
import { ValidationError } from "../core/errors.js";
import type { RetryPolicy } from "./workflow.js";

/** A retry policy with defaults applied and durations in ms. */
export interface ResolvedRetryPolicy {
  maxAttempts: number;
  initialDelayMs: number;
  maxDelayMs: number;
  backoffFactor: number;
  nonRetryable: string[];
}

const policySchema = z
  .object({
    maxAttempts: z.number().int().min(1).max(10_000).default(3),
    initialDelay: durationSchema.default(1_000),
    maxDelay: durationSchema.default(3_600_000),
    backoffFactor: z.number().min(1).max(100).default(2),
    nonRetryable: z.array(z.string()).default([]),
  })
  .strict();

/** Applies defaults and validates; throws ValidationError naming the bad field. */
export function resolveRetryPolicy(opKey: string, policy: RetryPolicy | undefined): ResolvedRetryPolicy {
  // No policy (most steps): the schema's defaults, parsed once, not on every step.
  if (policy === undefined) return { ...DEFAULT_POLICY, nonRetryable: [] };
  return parsePolicy(opKey, policy);
}

function parsePolicy(opKey: string, policy: RetryPolicy): ResolvedRetryPolicy {
  const parsed = policySchema.safeParse(policy);
  if (!parsed.success) {
    throw new ValidationError(`Step "${opKey}" retry options: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`);
  }
  const { maxAttempts, initialDelay, maxDelay, backoffFactor, nonRetryable } = parsed.data;
  return { maxAttempts, initialDelayMs: initialDelay, maxDelayMs: maxDelay, backoffFactor, nonRetryable };
}

const DEFAULT_POLICY: Readonly<ResolvedRetryPolicy> = parsePolicy("", {});

/** Delay before attempt `failedAttempt + 1`: exponential, capped, with "equal jitter" (half fixed, half random). */
export function backoffDelay(policy: ResolvedRetryPolicy, failedAttempt: number): number {
  const exponential = policy.initialDelayMs * policy.backoffFactor ** (failedAttempt - 1);
  const capped = Math.min(policy.maxDelayMs, exponential);
  return Math.round(capped / 2 + Math.random() * (capped / 2));
}

/** True when the error must not be retried under this policy. */
export function isNonRetryable(error: unknown, policy: ResolvedRetryPolicy): boolean {
  if (typeof error !== "object" || error === null) return false;
  const candidate = error as { nonRetryable?: unknown; name?: unknown; code?: unknown };
  if (candidate.nonRetryable === true) return true;
  return (
    (typeof candidate.name === "string" && policy.nonRetryable.includes(candidate.name)) ||
    (typeof candidate.code === "string" && policy.nonRetryable.includes(candidate.code))
  );
}

/**
 * The wait an error asks for before the next attempt (its `retryAfterMs`, e.g. a provider's
 * `Retry-After`), capped at the policy's `maxDelay`; 0 when it asks for none.
 */
export function retryAfterOf(error: unknown, policy: ResolvedRetryPolicy): number {
  if (typeof error !== "object" || error === null) return 0;
  const ms = (error as { retryAfterMs?: unknown }).retryAfterMs;
  return typeof ms === "number" && Number.isFinite(ms) && ms > 0 ? Math.min(ms, policy.maxDelayMs) : 0;
}
