import { performance } from "node:perf_hooks";
import type { Store } from "../core/store.js";

/**
 * The engine's clock. When the store has its own clock (PostgreSQL), the engine reads it at
 * calibration and advances it with the monotonic clock in between, so due times it computes
 * and compares (sleeps, timeouts, retries) are in the store's time: a worker whose wall clock
 * is minutes off, or steps (NTP, a resumed VM), never fires a timer early.
 */
export class StoreClock {
  private storeAt: number | null = null;
  private monotonicAt = 0;

  constructor(
    private readonly base: () => number,
    private readonly store: Store,
  ) {}

  /** Now, in the store's time (epoch ms). Bound, so it can be passed around. */
  readonly now = (): number => (this.storeAt === null ? this.base() : this.storeAt + Math.round(performance.now() - this.monotonicAt));

  /** Reads the store's clock (a no-op for stores without one). */
  async calibrate(): Promise<void> {
    if (!this.store.now) return;
    const before = performance.now();
    const storeNow = await this.store.now();
    const after = performance.now();
    this.monotonicAt = (before + after) / 2;
    this.storeAt = storeNow;
  }
}
