import { StepFailedError, ValidationError } from "../../core/errors.js";
import { lastOpKey, type Scope } from "../replay/op-keys.js";
import type { ResourceHandle, ResourceOptions } from "../workflow.js";
import type { OpScheduler } from "./op-scheduler.js";
import { step } from "./step.js";

/** `ctx.acquire`: a step named `acquire:<name>` whose result is released when the run ends, if not before (engine/saga.ts). */
export function acquire<T>(exec: OpScheduler, scope: Scope, name: string, resource: ResourceOptions<T>): Promise<ResourceHandle<T>> {
  if (typeof name !== "string" || name.length === 0) throw new ValidationError(`ctx.acquire needs a non-empty resource name (got ${JSON.stringify(name)}).`);
  if (!resource || typeof resource.acquire !== "function" || typeof resource.release !== "function") {
    throw new ValidationError(`ctx.acquire("${String(name)}") needs { acquire, release } functions.`);
  }
  const acquired = step<T>(exec, scope, `acquire:${String(name)}`, resource.acquire, { effect: "idempotent", retry: resource.retry }, resource);
  const key = lastOpKey(scope, `acquire:${String(name)}`);
  return acquired.then((value) => ({ value, key, release: () => releaseResource(exec, key) }));
}

/** The workflow's `handle.release()`: journaled, run at most once to success; replay returns at once. */
async function releaseResource(exec: OpScheduler, key: string): Promise<void> {
  if (exec.saga.isReleased(key) || exec.isSettled) return;
  await exec.inFlight(async () => {
    const result = await exec.saga.release(exec, key);
    if (!result.ok) throw new StepFailedError(key, result.error, result.attempts);
  });
}
