import type { StepSlotGrant, StepSlotRequest } from "../step-flow.js";

/** Flow control of steps (core/step-flow.ts): concurrency and rate-limit slots. Part of the {@link Store} port. */
export interface StepSlotStore {
  /**
   * Takes the slots of one step attempt, atomically for all its limits, or queues it. Concurrency slots
   * are held while the run is `running` at `request.epoch` with an unexpired lease, so a crashed holder's
   * slot frees when its lease expires; a rate limit counts starts in its window. Waiters are served first
   * come, first served (`decideSlots` in core/step-flow.ts); waiters whose run is finished are dropped. On a grant the
   * op's waiter rows go and the next waiter of each bucket is woken (it may fit too); on a refusal the op
   * is queued (once, keeping its place) and `retryAt` says when to look again.
   */
  acquireStepSlots(request: StepSlotRequest, now: number): Promise<StepSlotGrant>;
  /** Gives back the op's concurrency slots in `buckets` and wakes the first waiter of each (a suspended run becomes due). */
  releaseStepSlots(runId: string, opKey: string, buckets: readonly string[], now: number): Promise<void>;
}
