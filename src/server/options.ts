import type { EngineLogger } from "../engine/engine.js";

/** Options of {@link createServer}. */
export interface ServerOptions {
  /** Largest request body accepted, in bytes; larger ones get 413. Default 1 MiB. */
  bodyLimitBytes?: number;
  /** How often a stream looks for new journal entries. Default 200 ms. */
  streamPollMs?: number;
  /** A stream with nothing to send writes a comment this often, so proxies keep it open. Default 15 s. */
  keepAliveMs?: number;
  /** The `retry:` a stream advises EventSource clients to wait before reconnecting. Default 1000 ms. */
  streamRetryMs?: number;
  /** Where unexpected errors (500s) are logged. Default: JSON lines on stderr. */
  logger?: EngineLogger;
  /**
   * A built dashboard (`dist/dashboard/` of the package, see `builtDashboardDir()`) to serve at `/ui/`
   * beside the API, with `GET /` redirecting to it. Default: none, the API only.
   */
  dashboardDir?: string;
}

/** Options with their defaults, plus the signal that ends open streams when the server closes. */
export interface ResolvedServerOptions {
  bodyLimitBytes: number;
  streamPollMs: number;
  keepAliveMs: number;
  streamRetryMs: number;
  logger: EngineLogger;
  closing: AbortController;
}
