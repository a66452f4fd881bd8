import pg from "pg";

/** How often the LISTEN connection is pinged, so a silently dead connection is noticed. */
const PING_MS = 30_000;
/** Longest pause between reconnection attempts. */
const MAX_BACKOFF_MS = 10_000;

interface Connection {
  client: pg.Client;
  done: boolean;
  ping?: NodeJS.Timeout;
}

/**
 * Push notifications of one channel (a schema's wake-ups, or its journal notices): a dedicated
 * connection (not from the pool, which would hand it back) that LISTENs on the channel and calls
 * every subscriber with each notification's payload. It connects on the first subscription and
 * disconnects after the last. When the connection dies it reconnects with exponential back-off
 * and then calls the subscribers once without a payload, since notifications sent meanwhile were
 * lost. Subscribers must treat a call as a hint: read now.
 */
export class WakeListener {
  private readonly listeners = new Set<(payload: string | undefined) => void>();
  private current: Connection | undefined;
  private retry: NodeJS.Timeout | undefined;
  private failures = 0;
  private closed = false;
  /** True while the LISTEN is in effect. */
  private live = false;
  private waiters: (() => void)[] = [];

  /**
   * @param config connection settings (the store's, so it reaches the same server).
   * @param channel the quoted channel identifier, e.g. `"cairn_wake_cairn"`.
   */
  constructor(
    private readonly config: pg.ClientConfig,
    private readonly channel: string,
    private readonly onError: (error: Error) => void,
    private readonly applicationName = "cairn:listen",
  ) {}

  /** Calls `listener` on every notification (its payload; undefined after a reconnection) until the returned function is called. */
  subscribe(listener: (payload: string | undefined) => void): () => void {
    const entry = (payload: string | undefined): void => listener(payload);
    this.listeners.add(entry);
    this.start();
    return () => {
      this.listeners.delete(entry);
      if (this.listeners.size > 0) return;
      // No one is left to listen for: waiters for the LISTEN stop waiting.
      for (const resolve of this.waiters.splice(0)) resolve();
      void this.stop();
    };
  }

  /** Resolves once the LISTEN is in effect (at once when it already is), or once the last subscriber left; for tests and start-up ordering. */
  async listening(): Promise<void> {
    if (this.live || this.closed) return;
    await new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  /** Disconnects for good. */
  async close(): Promise<void> {
    this.closed = true;
    this.listeners.clear();
    for (const resolve of this.waiters.splice(0)) resolve();
    await this.stop();
  }

  private start(): void {
    if (this.closed || this.listeners.size === 0 || this.current || this.retry) return;
    void this.connect();
  }

  private async stop(): Promise<void> {
    if (this.retry) clearTimeout(this.retry);
    this.retry = undefined;
    const connection = this.current;
    this.current = undefined;
    this.live = false;
    if (connection) await this.end(connection);
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({ ...this.config, application_name: this.applicationName, query_timeout: 10_000 });
    const connection: Connection = { client, done: false };
    this.current = connection;
    client.on("error", (error) => this.lost(connection, error));
    client.on("end", () => this.lost(connection, new Error("The LISTEN connection to PostgreSQL ended.")));
    client.on("notification", (message) => {
      if (!connection.done && `"${message.channel}"` === this.channel) this.fire(message.payload);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${this.channel}`);
    } catch (error) {
      this.lost(connection, error as Error);
      return;
    }
    if (connection.done) return;
    this.live = true;
    connection.ping = setInterval(() => {
      client.query("SELECT 1").catch((error: unknown) => this.lost(connection, error as Error));
    }, PING_MS);
    connection.ping.unref();
    const reconnected = this.failures > 0;
    this.failures = 0;
    for (const resolve of this.waiters.splice(0)) resolve();
    if (reconnected) this.fire(undefined);
  }

  private lost(connection: Connection, error: Error): void {
    if (connection.done) return;
    void this.end(connection);
    if (this.current !== connection) return;
    this.current = undefined;
    this.live = false;
    if (this.closed || this.listeners.size === 0) return;
    this.onError(error);
    const delay = Math.min(MAX_BACKOFF_MS, 100 * 2 ** this.failures);
    this.failures++;
    this.retry = setTimeout(() => {
      this.retry = undefined;
      this.start();
    }, delay);
    this.retry.unref();
  }

  private async end(connection: Connection): Promise<void> {
    if (connection.done) return;
    connection.done = true;
    if (connection.ping) clearInterval(connection.ping);
    await connection.client.end().catch(() => undefined);
  }

  private fire(payload: string | undefined): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(payload);
      } catch (error) {
        this.onError(error as Error);
      }
    }
  }
}
