import type { EngineLogger } from "../engine/engine.js";
import type { MetricsTagLabels } from "./metrics/engine-metrics.js";

/** Options of {@link createServer}. */
export interface ServerOptions {
  /**
   * Tags shown as labels of the `cairn_runs_by_tag` gauge of `GET /metrics`: only these keys and
   * values, so the series stay bounded (at most 50 pairs).
   * @example metricsTags: { tier: ["free", "pro", "enterprise"] }
   */
  metricsTags?: MetricsTagLabels;
  /** Largest request body accepted, in bytes; larger ones get 413. Default 1 MiB. */
  bodyLimitBytes?: number;
  /**
   * How often a stream looks for new journal entries it was not told of. Default 200 ms, or 2 s on a
   * store that pushes notices of journal growth from other processes (PostgreSQL, `Store.onJournal`).
   */
  streamPollMs?: number;
  /** A stream with nothing to send writes a comment this often, so proxies keep it open. Default 15 s. */
  keepAliveMs?: number;
  /** The `retry:` a stream advises EventSource clients to wait before reconnecting. Default 1000 ms. */
  streamRetryMs?: number;
  /** Where unexpected errors (500s) are logged. Default: JSON lines on stderr. */
  logger?: EngineLogger;
  /**
   * `"tokens"`: every request but `/health`, `/openapi.json` and webhooks needs an API token
   * (`Authorization: Bearer cairn_…`) with the route's scope. `"none"` (the default): anyone who can
   * reach the server may do anything, so `serve` listens only on loopback addresses then.
   */
  auth?: "none" | "tokens";
  /** Webhooks by name, served at `POST /webhooks/<name>`. */
  webhooks?: Record<string, WebhookOptions>;
  /**
   * A built dashboard (`dist/dashboard/` of the package, see `builtDashboardDir()`) to serve at `/ui/`
   * beside the API, with `GET /` redirecting to it. Default: none, the API only.
   */
  dashboardDir?: string;
  /**
   * Host names (`cairn.example.com`, `10.0.0.5`, `[fd00::1]`; a port is ignored) the `Host` header may
   * carry besides the loopback names (`127.0.0.1`, `localhost`, `[::1]`); any other is refused (421),
   * so a DNS name rebound to 127.0.0.1 cannot read the API. `"any"` turns the check off (a server
   * behind a proxy that checks the host itself). {@link serve} adds the address it listens on, and
   * on a wildcard address (`0.0.0.0`, `::`) without allowed hosts checks none.
   */
  allowedHosts?: string[] | "any";
  /**
   * Origins (`https://ops.example.com`) whose web pages may call the API (CORS). Pages of any other
   * origin get no CORS headers and are refused on writes (403). Default: none.
   */
  corsOrigins?: string[];
}

/**
 * A webhook: deliveries signed with `secret` become events for a run, or (without `runId`) published
 * events that start the workflows subscribed to their type.
 * @example
 * webhooks: { github: { secret: process.env.GH_SECRET!, runId: (b: any) => `pr/${b.number}`, type: "pr", eventId: (b: any) => b.delivery } }
 */
export interface WebhookOptions {
  /** The shared secret the sender signs the timestamp and raw body with (HMAC-SHA256, header `Cairn-Signature`). */
  secret: string;
  /** How far the signed timestamp may be from this server's clock, in seconds (older deliveries are replays). Default 300. */
  toleranceSeconds?: number;
  /**
   * The run to deliver to, from the parsed JSON body. Leave it out to publish the event instead
   * (`engine.publishEvent`): it starts the workflows whose `on` names the type, once per event id.
   */
  runId?: (body: any) => string;
  /** The event type, fixed or from the body. */
  type: string | ((body: any) => string);
  /** The idempotency key, from the body (e.g. the sender's delivery id): a repeated one is delivered once. */
  eventId: (body: any) => string;
  /** The event's payload; default the whole body. */
  payload?: (body: any) => unknown;
}

/** Options with their defaults, plus the signal that ends open streams when the server closes. */
export interface ResolvedServerOptions {
  bodyLimitBytes: number;
  streamPollMs: number;
  keepAliveMs: number;
  streamRetryMs: number;
  logger: EngineLogger;
  auth: "none" | "tokens";
  webhooks: Record<string, WebhookOptions>;
  closing: AbortController;
}
