import type { Store } from "../core/store.js";

/**
 * The engine's clock. When the store has its own clock (PostgreSQL), the engine keeps an
 * offset to it, so due times it computes (sleeps, timeouts, retries) are in the store's
 * time: a worker whose clock is minutes off still never fires a timer early.
 */
export class StoreClock {
  private offset = 0;

  constructor(
    private readonly base: () => number,
    private readonly store: Store,
  ) {}

  /** Now, in the store's time (epoch ms). Bound, so it can be passed around. */
  readonly now = (): number => this.base() + this.offset;

  /** Measures the offset to the store's clock (a no-op for stores without one). */
  async calibrate(): Promise<void> {
    if (!this.store.now) return;
    const before = this.base();
    const storeNow = await this.store.now();
    const after = this.base();
    this.offset = storeNow - Math.round((before + after) / 2);
  }
}
