import type { QueueLimits, QueueStat } from "../core/flow-control.js";

/** A queue as `engine.listQueues()` shows it: its limits (when this engine declares it), totals, and the counts per key. */
export interface QueueState {
  name: string;
  /** The limits this engine declares for it; null for a queue it does not declare (runs of another engine's config). */
  limits: QueueLimits | null;
  running: number;
  waiting: number;
  suspended: number;
  /** Counts per concurrency key (`concurrencyKey: null` groups the runs without one). */
  keys: QueueStat[];
}

/** Folds per-key counts into one state per queue; declared queues without runs appear with zeros. */
export function queueStates(stats: readonly QueueStat[], declared: readonly QueueLimits[]): QueueState[] {
  const states = new Map<string, QueueState>();
  const state = (name: string): QueueState => {
    let found = states.get(name);
    if (!found) {
      found = { name, limits: declared.find((q) => q.name === name) ?? null, running: 0, waiting: 0, suspended: 0, keys: [] };
      states.set(name, found);
    }
    return found;
  };
  for (const q of declared) state(q.name);
  for (const stat of stats) {
    const s = state(stat.queue);
    s.running += stat.running;
    s.waiting += stat.waiting;
    s.suspended += stat.suspended;
    s.keys.push(stat);
  }
  return [...states.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
