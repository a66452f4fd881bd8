import { isStart, pickQueued, queueAllowance, type QueueLimits, type QueueStat, type RunFlow } from "../../core/flow-control.js";
import type { RunRecord } from "../../core/run.js";
import type { ClaimRequest } from "../../core/store.js";
import { compareText } from "../common/list-query.js";
import { claimKey, isClaimable } from "../common/run-state.js";

/** The queue columns of a run held by the memory store, plus when it first started (rate limit). */
interface FlowRow extends RunFlow {
  startedAt: number | null;
}

/** Flow control for {@link MemoryStore}: the same decisions as the SQL stores, over its maps. */
export class MemoryFlow {
  private readonly flows = new Map<string, FlowRow>();
  private readonly debounceKeys = new Map<string, string>();

  /** Records the debounce key (and queue columns, if any) of a new debounced run. */
  setDebounce(runId: string, key: string, flow: RunFlow | undefined): void {
    this.debounceKeys.set(runId, key);
    if (flow) this.setFlow(runId, flow);
  }

  /** The debounce key of a run, if it was started debounced. */
  debounceKey(runId: string): string | undefined {
    return this.debounceKeys.get(runId);
  }

  /** Records the queue columns of a new run. */
  setFlow(runId: string, flow: RunFlow): void {
    this.flows.set(runId, { ...flow, startedAt: null });
  }

  /** See `Store.queueStats`. */
  stats(runs: readonly RunRecord[], now: number): QueueStat[] {
    const groups = new Map<string, QueueStat>();
    for (const run of runs) {
      const flow = this.flows.get(run.runId);
      if (!flow || (run.status !== "pending" && run.status !== "running" && run.status !== "suspended")) continue;
      const id = JSON.stringify([flow.queue, flow.concurrencyKey]);
      let stat = groups.get(id);
      if (!stat) groups.set(id, (stat = { queue: flow.queue, concurrencyKey: flow.concurrencyKey, running: 0, waiting: 0, suspended: 0 }));
      if (run.status === "running") stat.running++;
      else if (run.status === "pending" || (run.wakeAt !== null && run.wakeAt <= now)) stat.waiting++;
      else stat.suspended++;
    }
    return [...groups.values()].sort(
      (a, b) =>
        compareText(a.queue, b.queue) || (a.concurrencyKey === null ? -1 : b.concurrencyKey === null ? 1 : compareText(a.concurrencyKey, b.concurrencyKey)),
    );
  }

  /** True when `run` is in a queue and waits for a slot (pending or due); such runs are left out of the unqueued claim. */
  waitsForSlot(run: RunRecord): boolean {
    return run.status !== "running" && this.flows.has(run.runId);
  }

  /** The queued runs this claim may take, at most `max`, queue by queue; first starts are stamped for the rate limit. */
  pick(runs: readonly RunRecord[], request: ClaimRequest, max: number): RunRecord[] {
    const out: RunRecord[] = [];
    for (const limits of request.queues ?? []) {
      if (out.length >= max) break;
      for (const run of this.pickQueue(runs, request, limits, max - out.length)) {
        const flow = this.flows.get(run.runId);
        if (flow && isStart(run)) flow.startedAt = request.now;
        out.push(run);
      }
    }
    return out;
  }

  private pickQueue(runs: readonly RunRecord[], request: ClaimRequest, limits: QueueLimits, max: number): RunRecord[] {
    let running = 0;
    let started = 0;
    const byKey = new Map<string, number>();
    const candidates: (RunRecord & { concurrencyKey: string | null; priority: number })[] = [];
    for (const run of runs) {
      const flow = this.flows.get(run.runId);
      if (!flow || flow.queue !== limits.name) continue;
      if (limits.rateLimit && flow.startedAt !== null && flow.startedAt > request.now - limits.rateLimit.perMs) started++;
      if (run.status === "running") {
        running++;
        if (flow.concurrencyKey !== null) byKey.set(flow.concurrencyKey, (byKey.get(flow.concurrencyKey) ?? 0) + 1);
      } else if (isClaimable(run, request)) {
        candidates.push({ ...run, concurrencyKey: flow.concurrencyKey, priority: flow.priority });
      }
    }
    // A stable sort over the runs in insertion order: FIFO among equal priorities and times.
    candidates.sort((a, b) => b.priority - a.priority || claimKey(a) - claimKey(b));
    const picked = pickQueued(candidates, limits, queueAllowance(limits, running, started), byKey, max);
    return picked.map(({ concurrencyKey: _k, priority: _p, ...run }) => run);
  }
}
