import type { StepFlowLimit } from "../core/step-flow.js";
import type { OpExecution } from "./execution-types.js";

/**
 * Takes the flow-control slots of one step attempt (rate limits, concurrency per key) from the store.
 * Refused: the op blocks on a `flow` wait until the store's `retryAt` (or a release wakes the run), so
 * a run whose only work is waiting for a slot suspends and holds nothing. Resolves true when granted.
 */
export async function takeStepSlots(execution: OpExecution, key: string, limits: readonly StepFlowLimit[]): Promise<boolean> {
  if (limits.length === 0) return true;
  const host = execution.hostRef;
  const grant = await host.store.acquireStepSlots({ runId: execution.runId, opKey: key, epoch: execution.epoch, limits: [...limits] }, host.clock());
  if (grant.granted) return true;
  execution.block({ kind: "flow", opKey: key, wakeAt: grant.retryAt ?? host.clock() + 30_000, ahead: grant.ahead });
  return false;
}

/**
 * Gives back the attempt's concurrency slots, waking the next waiter. A failure is only logged: the
 * slot frees anyway when this run's lease moves on (the store counts only holders with a live lease).
 */
export async function releaseStepSlots(execution: OpExecution, key: string, limits: readonly StepFlowLimit[]): Promise<void> {
  if (limits.length === 0) return;
  const buckets = limits.filter((l) => l.kind === "concurrency").map((l) => l.bucket);
  if (buckets.length === 0) return;
  const host = execution.hostRef;
  try {
    await host.store.releaseStepSlots(execution.runId, key, buckets, host.clock());
  } catch {
    // The lease bounds how long a slot outlives its holder.
  }
}
