import { toMs } from "../../core/duration.js";
import { ValidationError } from "../../core/errors.js";
import { encode } from "../../core/serialize.js";
import { stepFlowLimits } from "../../core/step-flow.js";
import type { Scope } from "../replay/op-keys.js";
import { resolveRetryPolicy } from "../retry-policy.js";
import { runStep } from "../step-runner.js";
import type { JournalSearchHit, ResourceOptions, StepOptions } from "../workflow.js";
import type { OpScheduler } from "./op-scheduler.js";
import { approvalGate, checkApproval } from "./resume-approval.js";

/**
 * `ctx.step`: checks the options (bad ones fail the workflow code at the call, before anything is
 * journaled), registers a compensation or a resource's release, then runs the step (engine/step-runner.ts).
 */
export function step<T>(
  exec: OpScheduler,
  scope: Scope,
  name: string,
  fn: (info: any) => Promise<T> | T,
  options: StepOptions<T> = {},
  resource?: ResourceOptions<T>,
): Promise<T> {
  if (options.approval !== undefined) {
    if (typeof fn !== "function") throw new ValidationError(`ctx.step("${name}") needs a function to run.`);
    // A step that needs a fresh approval is issued once a person approved it (engine/ops/resume-approval.ts).
    const gate = approvalGate(exec, scope, name, checkApproval(name, options.approval));
    if (gate) return gate.then(() => issueStep(exec, scope, name, fn, options, resource));
  }
  return issueStep(exec, scope, name, fn, options, resource);
}

function issueStep<T>(
  exec: OpScheduler,
  scope: Scope,
  name: string,
  fn: (info: any) => Promise<T> | T,
  options: StepOptions<T>,
  resource: ResourceOptions<T> | undefined,
): Promise<T> {
  if (typeof fn !== "function") throw new ValidationError(`ctx.step("${name}") needs a function to run.`);
  if (options.compensate !== undefined && typeof options.compensate !== "function") {
    throw new ValidationError(`ctx.step("${name}"): compensate must be a function (result, { idempotencyKey }) => …`);
  }
  // Inside a loop iteration too: loop checkpoints keep the registrations' entries (engine/ops/loop.ts).
  const registers = resource !== undefined || options.compensate !== undefined;
  const cleanupPolicy = registers ? resolveRetryPolicy(name, resource ? resource.retry : (options.compensateRetry ?? options.retry)) : undefined;
  const policy = resolveRetryPolicy(name, options.retry);
  const timeoutMs = options.timeout === undefined ? undefined : toMs(options.timeout);
  if (options.intent !== undefined) {
    try {
      encode(options.intent);
    } catch (error) {
      throw new ValidationError(`ctx.step("${name}"): intent must be plain data the journal can hold (${(error as Error).message}).`);
    }
  }
  const key = exec.issue(scope, name, "step");
  if (resource) exec.saga.setReleaser(key, { fn: resource.release, policy: cleanupPolicy! });
  else if (registers) {
    exec.saga.setCompensator(key, {
      fn: options.compensate!,
      policy: cleanupPolicy!,
      ...(options.effect === undefined ? {} : { effect: options.effect }),
      ...(options.reconcile === undefined ? {} : { reconcile: options.reconcile }),
    });
  }
  const limits = stepFlowLimits(name, options);
  return exec.awaitOp<T>(key, () => runStep(exec, key, fn, options, policy, timeoutMs, limits));
}

/** `ctx.searchJournal`: a step, so what the search found is journaled and replay returns the same hits. */
export function searchJournal(exec: OpScheduler, scope: Scope, query: string, options: { limit?: number; name?: string } = {}): Promise<JournalSearchHit[]> {
  if (typeof query !== "string") throw new ValidationError("ctx.searchJournal needs a query string.");
  const limit = options.limit ?? 10;
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > 1000) throw new ValidationError("ctx.searchJournal: limit must be a whole number from 1 to 1000.");
  return step(exec, scope, options.name ?? "search", () => exec.hostRef.store.searchJournal(exec.runId, query, limit), { effect: "none" });
}
