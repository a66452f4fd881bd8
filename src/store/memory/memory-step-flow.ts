import { isTerminal, type RunRecord } from "../../core/run.js";
import type { StepSlotStore } from "../../core/store.js";
import type { MemoryWriter } from "./memory-write.js";
import { decideSlots, type BucketState, type StepSlotGrant, type StepSlotRequest } from "../../core/step-flow.js";

interface Waiter {
  runId: string;
  opKey: string;
  since: number;
  /** Arrival order, to break ties of `since`. */
  order: number;
}

/**
 * Step flow control of the memory store (see `Store.acquireStepSlots`): the same rule as the SQL
 * stores, over maps. Calls run one at a time (the store is single-threaded), so counting then taking is atomic.
 */
export class MemoryStepFlow {
  private readonly slots = new Map<string, Map<string, number>>();
  private readonly hits = new Map<string, number[]>();
  private readonly waiters = new Map<string, Waiter[]>();
  private arrivals = 0;

  constructor(
    private readonly runs: ReadonlyMap<string, RunRecord>,
    private readonly wake: (runId: string, now: number) => void,
  ) {}

  acquire(request: StepSlotRequest, now: number): StepSlotGrant {
    const op = `${request.runId}\u0000${request.opKey}`;
    const states: BucketState[] = request.limits.map((limit) => {
      const queue = this.liveWaiters(limit.bucket);
      const mine = queue.findIndex((w) => w.runId === request.runId && w.opKey === request.opKey);
      const ahead = mine === -1 ? queue.length : mine;
      if (limit.kind === "rate") {
        const window = (this.hits.get(limit.bucket) ?? []).filter((at) => at > now - limit.periodMs!);
        this.hits.set(limit.bucket, window);
        return { used: window.length, ahead, nextFree: window.length > 0 ? window[0]! + limit.periodMs! : null };
      }
      const held = this.slots.get(limit.bucket) ?? new Map<string, number>();
      let nextFree: number | null = null;
      for (const [holder, epoch] of [...held]) {
        const run = this.runs.get(holder.split("\u0000")[0]!);
        const live = run && run.status === "running" && run.leaseEpoch === epoch && run.leaseExpiresAt !== null && run.leaseExpiresAt > now;
        if (!live || holder === op) held.delete(holder);
        else if (nextFree === null || run.leaseExpiresAt! < nextFree) nextFree = run.leaseExpiresAt;
      }
      this.slots.set(limit.bucket, held);
      return { used: held.size, ahead, nextFree };
    });
    const grant = decideSlots(request.limits, states, now);
    for (const limit of request.limits) {
      const queue = this.waiters.get(limit.bucket) ?? [];
      const mine = queue.findIndex((w) => w.runId === request.runId && w.opKey === request.opKey);
      if (!grant.granted) {
        if (mine === -1) queue.push({ runId: request.runId, opKey: request.opKey, since: now, order: this.arrivals++ });
        this.waiters.set(limit.bucket, queue);
        continue;
      }
      if (mine !== -1) queue.splice(mine, 1);
      if (limit.kind === "rate") this.hits.get(limit.bucket)!.push(now);
      else this.slots.get(limit.bucket)!.set(op, request.epoch);
      if (queue[0]) this.wake(queue[0].runId, now);
    }
    return grant;
  }

  release(runId: string, opKey: string, buckets: readonly string[], now: number): void {
    for (const bucket of buckets) {
      this.slots.get(bucket)?.delete(`${runId}\u0000${opKey}`);
      const first = this.liveWaiters(bucket)[0];
      if (first) this.wake(first.runId, now);
    }
  }

  /** The bucket's waiters in order, without those whose run finished (or is gone). */
  private liveWaiters(bucket: string): Waiter[] {
    const queue = (this.waiters.get(bucket) ?? []).filter((w) => {
      const run = this.runs.get(w.runId);
      return run !== undefined && !isTerminal(run.status);
    });
    queue.sort((a, b) => a.since - b.since || a.order - b.order);
    this.waiters.set(bucket, queue);
    return queue;
  }
}

/** The {@link StepSlotStore} part of {@link MemoryStore}: step flow control, each call atomic. */
export class MemoryStepSlots implements StepSlotStore {
  private readonly stepFlow: MemoryStepFlow;

  constructor(private readonly w: MemoryWriter) {
    this.stepFlow = new MemoryStepFlow(w.t.runs, (runId, now) => w.wake(runId, now));
  }

  /** See {@link Store.acquireStepSlots}. */
  async acquireStepSlots(request: StepSlotRequest, now: number): Promise<StepSlotGrant> {
    return this.w.t.atomic(() => this.stepFlow.acquire(request, now));
  }

  /** See {@link Store.releaseStepSlots}. */
  async releaseStepSlots(runId: string, opKey: string, buckets: readonly string[], now: number): Promise<void> {
    this.w.t.atomic(() => this.stepFlow.release(runId, opKey, buckets, now));
  }
}
