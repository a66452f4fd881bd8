import { Hono } from "hono";
import type { Engine } from "../engine/engine.js";
import { consoleLogger } from "../engine/logger.js";
import { RequestError, toHttpError } from "./errors.js";
import { registerDashboardRoutes } from "./dashboard.js";
import type { ResolvedServerOptions, ServerOptions } from "./options.js";
import { registerHumanRequestRoutes } from "./routes/human-requests.js";
import { registerRetentionRoutes } from "./routes/retention.js";
import { registerOutboxRoutes } from "./routes/outbox.js";
import { registerOverviewRoute } from "./routes/overview.js";
import { registerCostsRoute } from "./routes/costs.js";
import { registerAlertRoutes } from "./routes/alerts.js";
import { registerRunRoutes } from "./routes/runs.js";
import { registerLiveRoutes } from "./routes/live.js";
import { registerStreamRoute } from "./routes/stream.js";
import { registerSystemRoutes } from "./routes/system.js";
import { registerOperatorRoutes } from "./routes/operator.js";
import { registerSecurityRoutes } from "./routes/security.js";
import { registerWebhookRoute } from "./routes/webhooks.js";
import { registerEventRoutes } from "./routes/events.js";
import { EventInvalidError } from "../core/errors.js";
import { registerTokenAuth } from "./auth/middleware.js";
import { TicketBook } from "./auth/tickets.js";
import { registerAuthRoutes } from "./routes/auth.js";
import { hostNameOf, LOOPBACK_HOST_NAMES, normalizeOrigin, registerRequestGuard, type RequestGuardOptions } from "./request-guard.js";

/** The Hono app of {@link createServer}, with a way to end its open streams. */
export type CairnApp = Hono & {
  /** Ends every open stream (their clients reconnect elsewhere). Called by `serve().close()`. */
  closeStreams(): void;
};

/**
 * The HTTP API over an engine, as a Hono app: mount it anywhere Hono runs, or use {@link serve}.
 * The server owns neither the engine nor its workers: close them yourself.
 * @example
 * const engine = await createEngine({ store: "sqlite:.cairn/cairn.db", workflows: [research] });
 * const app = createServer(engine, { bodyLimitBytes: 256 * 1024 });
 * const res = await app.request("/runs?status=failed");
 */
export function createServer(engine: Engine, options: ServerOptions = {}): CairnApp {
  // The one place the server holds the whole store: each route module gets the slices it needs.
  const store = engine.store;
  const resolved: ResolvedServerOptions = {
    bodyLimitBytes: positive(options.bodyLimitBytes, 1024 * 1024, "bodyLimitBytes"),
    // With push notices of other processes' journal writes (PostgreSQL) the poll is only a safety net.
    streamPollMs: positive(options.streamPollMs, store.onJournal ? 2000 : 200, "streamPollMs"),
    keepAliveMs: positive(options.keepAliveMs, 15_000, "keepAliveMs"),
    streamRetryMs: positive(options.streamRetryMs, 1000, "streamRetryMs"),
    logger: options.logger ?? consoleLogger(),
    auth: authMode(options.auth),
    webhooks: { ...options.webhooks },
    closing: new AbortController(),
  };
  const app = new Hono() as CairnApp;
  registerRequestGuard(app, guardOptions(options));
  if (resolved.auth === "tokens") {
    const tickets = new TicketBook();
    registerTokenAuth(app, store, tickets);
    registerAuthRoutes(app, resolved, tickets, store);
  }
  registerRunRoutes(app, engine, resolved, store);
  registerLiveRoutes(app, engine, resolved, store);
  registerRetentionRoutes(app, engine, resolved, store);
  registerStreamRoute(app, engine, resolved, store);
  registerHumanRequestRoutes(app, engine, resolved, store);
  registerSecurityRoutes(app, resolved, store);
  registerWebhookRoute(app, engine, resolved, store);
  registerEventRoutes(app, engine, resolved, store);
  registerSystemRoutes(app, engine, store, options.metricsTags);
  registerOperatorRoutes(app, engine, resolved, store);
  registerOutboxRoutes(app, engine, store);
  registerOverviewRoute(app, engine, store);
  registerCostsRoute(app, engine);
  registerAlertRoutes(app, resolved, store);
  if (options.dashboardDir !== undefined) registerDashboardRoutes(app, options.dashboardDir);
  app.notFound((c) => {
    const error = new RequestError("ROUTE_NOT_FOUND", `No route ${c.req.method} ${c.req.path}. The routes are listed at GET /openapi.json.`, 404);
    return c.json({ error: { code: error.code, message: error.message } }, 404);
  });
  app.onError((error, c) => {
    const { status, code, message, unexpected } = toHttpError(error);
    if (unexpected) resolved.logger.log("error", "request failed", { method: c.req.method, path: c.req.path, error: String(error.stack ?? error) });
    const issues = error instanceof EventInvalidError ? { issues: error.issues } : {};
    return c.json({ error: { code, message, ...issues } }, status as 400);
  });
  app.closeStreams = () => resolved.closing.abort();
  return app;
}

function guardOptions(options: ServerOptions): RequestGuardOptions {
  const corsOrigins = new Set((options.corsOrigins ?? []).map((origin) => normalizeOrigin(origin).toLowerCase()));
  if (options.allowedHosts === "any") return { hosts: "any", corsOrigins };
  const hosts = new Set<string>(LOOPBACK_HOST_NAMES);
  for (const entry of options.allowedHosts ?? []) {
    const name = hostNameOf(entry);
    if (name === undefined)
      throw new RangeError(`createServer: allowedHosts has ${JSON.stringify(entry)}, not a host name (such as cairn.example.com or 10.0.0.5).`);
    hosts.add(name);
  }
  return { hosts, corsOrigins };
}

function authMode(auth: ServerOptions["auth"]): "none" | "tokens" {
  if (auth === undefined || auth === "none" || auth === "tokens") return auth ?? "none";
  throw new RangeError(`createServer: auth must be "none" or "tokens", got ${String(auth)}.`);
}

function positive(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value <= 0) throw new RangeError(`createServer: ${name} must be a positive whole number, got ${String(value)}.`);
  return value;
}
