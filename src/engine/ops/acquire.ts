import { StepFailedError, ValidationError } from "../../core/errors.js";
import { newEntry, opKey, type EntryData } from "../../core/journal.js";
import { serializeError } from "../../core/serialize.js";
import { crashPoint } from "../crash-points.js";
import { lastOpKey, type Scope } from "../replay/op-keys.js";
import { backoffDelay, isNonRetryable, resolveRetryPolicy, type ResolvedRetryPolicy } from "../retry-policy.js";
import type { ResourceHandle, ResourceOptions } from "../workflow.js";
import type { OpScheduler } from "./op-scheduler.js";
import { step } from "./step.js";

/**
 * `ctx.acquire`: a step named `acquire:<name>` whose result is released when the run ends, if not
 * before (engine/saga.ts). Inside a loop iteration the resource is released when the iteration ends
 * at the latest, and a resume that finds it still held (its worker stopped mid-iteration) releases
 * it and acquires it again, so the continuation never works with a resource of a dead process.
 */
export function acquire<T>(exec: OpScheduler, scope: Scope, name: string, resource: ResourceOptions<T>): Promise<ResourceHandle<T>> {
  if (typeof name !== "string" || name.length === 0) throw new ValidationError(`ctx.acquire needs a non-empty resource name (got ${JSON.stringify(name)}).`);
  if (!resource || typeof resource.acquire !== "function" || typeof resource.release !== "function") {
    throw new ValidationError(`ctx.acquire("${String(name)}") needs { acquire, release } functions.`);
  }
  const opName = `acquire:${String(name)}`;
  if (scope.prefix !== "" && !exec.saga.halted) {
    const next = scope.prefix + opKey(opName, scope.counters.get(opName) ?? 0);
    const stale = exec.saga.staleResource(next);
    if (stale) return reacquire(exec, scope, opName, resource, stale);
  }
  const acquired = step<T>(exec, scope, opName, resource.acquire, { effect: "idempotent", retry: resource.retry }, resource);
  const key = lastOpKey(scope, opName);
  return acquired.then((value) => ({ value, key, release: () => releaseResource(exec, key) }));
}

/**
 * A loop iteration's resource an earlier execution acquired and did not release: release it (journaled
 * `by: "resume"`), then acquire it again under the same op key, as a new attempt with its own
 * idempotency key (`<runId>:<key>@<attempt>`; an attempt after a crash that interrupted it keeps that key). The journaled acquisition is dropped from replay; the
 * new one's outcome takes its place (replay/journal-index.ts), so a later resume returns it.
 */
async function reacquire<T>(
  exec: OpScheduler,
  scope: Scope,
  opName: string,
  resource: ResourceOptions<T>,
  stale: "held" | "released",
): Promise<ResourceHandle<T>> {
  const key = exec.issue(scope, opName, "step");
  const policy = resolveRetryPolicy(opName, resource.retry);
  exec.saga.setReleaser(key, { fn: resource.release, policy });
  const value = await exec.inFlight(async () => {
    if (stale === "held") {
      const released = await exec.saga.releaseStale(exec, key);
      if (!released.ok) {
        exec.hostRef.logger.log("warn", "a resource held before the resume could not be released", { runId: exec.runId, opKey: key, error: released.error });
      }
    }
    return acquireAgain(exec, key, resource, policy);
  });
  return { value, key, release: () => releaseResource(exec, key) };
}

/** Attempts the acquisition until it succeeds or its retries run out; intent before, outcome after. */
async function acquireAgain<T>(exec: OpScheduler, key: string, resource: ResourceOptions<T>, policy: ResolvedRetryPolicy): Promise<T> {
  const history = exec.stepHistory(key).entries;
  let attempt = Math.max(0, ...history.map((entry) => (entry.data as { attempt?: number }).attempt ?? 0));
  // An acquisition whose intent is journaled without an outcome (its worker died during or after
  // acquire) may hold a resource: attempt it again with the same idempotency key, so the provider
  // hands back that resource and the release covers it, rather than leaking it under a new key.
  let generation = interruptedGeneration(history);
  for (let used = 1; ; used++) {
    attempt += 1;
    generation ??= attempt;
    await exec.write([newEntry("step.started", key, { attempt })]);
    try {
      const value = await resource.acquire({
        idempotencyKey: `${exec.runId}:${key}@${generation}`,
        attempt,
        unconfirmed: 0,
        signal: exec.signal,
        heartbeat: () => exec.hostRef.heartbeat(exec.runId),
        progress: () => undefined,
      });
      crashPoint("after-reacquire-effect", key);
      const completed: EntryData["step.completed"] = { result: value, attempt, resource: true };
      await exec.write([newEntry("step.completed", key, completed)]);
      exec.saga.noteCompleted(key, completed);
      return value;
    } catch (error) {
      const final = isNonRetryable(error, policy) || used >= policy.maxAttempts;
      const serialized = serializeError(error);
      serialized.opKey = key;
      await exec.write([newEntry("step.failed", key, { attempt, error: serialized, final })]);
      if (final) throw new StepFailedError(key, serialized, attempt);
      generation = undefined; // acquire threw: it holds nothing, the next attempt is a new acquisition
      await new Promise((resolve) => setTimeout(resolve, backoffDelay(policy, used)));
    }
  }
}

/**
 * The attempt whose idempotency key an interrupted re-acquisition used: the first of the intents
 * journaled after the op's last outcome (each crash adds one), or undefined when none is open.
 */
function interruptedGeneration(history: readonly { kind: string; data: unknown }[]): number | undefined {
  let first: number | undefined;
  for (let i = history.length - 1; i >= 0 && history[i]!.kind === "step.started"; i--) first = (history[i]!.data as { attempt?: number }).attempt;
  return first;
}

/** The workflow's `handle.release()`: journaled, run at most once to success; replay returns at once. */
async function releaseResource(exec: OpScheduler, key: string): Promise<void> {
  if (exec.saga.isReleased(key) || exec.isSettled) return;
  await exec.inFlight(async () => {
    const result = await exec.saga.release(exec, key);
    if (!result.ok) throw new StepFailedError(key, result.error, result.attempts);
  });
}
