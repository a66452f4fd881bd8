/** Where the data lives, its schema and its connections, and the optional push capabilities of a backend (its own clock, wake-ups). Part of the {@link Store} port. */
export interface StoreConnection {
  /** A description of where the data lives, e.g. `sqlite:/abs/path.db`. */
  readonly url: string;
  /** Creates or upgrades the schema. Idempotent; safe to call from several processes. */
  migrate(): Promise<void>;
  /** Releases connections and file handles. */
  close(): Promise<void>;

  // ── optional capabilities ──
  /**
   * The store's own clock (epoch ms), when it has one — PostgreSQL's database clock. Engines then
   * schedule timers and leases by it, so skewed worker clocks cannot fire a timer early or steal a lease.
   * Stores with a clock ignore the `now` arguments of claims, leases and wake-ups and use their own.
   */
  now?(): Promise<number>;
  /**
   * Push wake-ups (PostgreSQL LISTEN/NOTIFY): `listener` is called when runs may have become runnable
   * anywhere (started, event sent, child finished, timer armed soon). Returns an unsubscribe function.
   */
  onWake?(listener: () => void): () => void;
}
