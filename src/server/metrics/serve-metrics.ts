import { Hono } from "hono";
import type { Engine } from "../../engine/engine.js";
import { registerTokenAuth } from "../auth/middleware.js";
import { toHttpError } from "../errors.js";
import { isLoopbackHost } from "../loopback.js";
import { listen, type RunningServer } from "../serve.js";
import { registerMetricsRoute } from "./metrics-route.js";
import type { MetricsTagLabels } from "./engine-metrics.js";

/** Options of {@link serveMetrics}. */
export interface MetricsServerOptions {
  /** Address to listen on. Default `127.0.0.1`; anything but loopback needs `auth: "tokens"`. */
  host?: string;
  /** Port; 0 picks a free one. */
  port: number;
  /** `"tokens"`: a scrape needs `Authorization: Bearer <token>` with the read scope and no namespace. Default `"none"`. */
  auth?: "none" | "tokens";
  /** Tags shown as labels of `cairn_runs_by_tag`: only these keys and values (bounded). */
  metricsTags?: MetricsTagLabels;
}

/**
 * Serves only `GET /metrics` (Prometheus text, the same as the API server's) for this engine's
 * process: what its workers did since it started, plus the store-wide gauges. For worker processes
 * that run no API server (`cairn worker --metrics-port`). Close it before the engine.
 * @example
 * const worker = engine.startWorker();
 * const metrics = await serveMetrics(engine, { port: 9464 });
 * // scrape http://127.0.0.1:9464/metrics
 */
export async function serveMetrics(engine: Engine, options: MetricsServerOptions): Promise<RunningServer> {
  const host = options.host ?? "127.0.0.1";
  const auth = options.auth ?? "none";
  if (!isLoopbackHost(host) && auth !== "tokens")
    throw new RangeError(
      `serveMetrics: refusing to listen on ${host} without authentication: the metrics name every workflow and count every namespace's runs. ` +
        `Pass auth: "tokens" (scrape with a read token without a namespace), or listen on a loopback address.`,
    );
  const app = new Hono();
  const store = engine.store;
  if (auth === "tokens") registerTokenAuth(app, store);
  const stop = registerMetricsRoute(app, engine, store, options.metricsTags);
  app.notFound((c) =>
    c.json({ error: { code: "ROUTE_NOT_FOUND", message: `No route ${c.req.method} ${c.req.path}: this server has only GET /metrics.` } }, 404),
  );
  app.onError((error, c) => {
    const { status, code, message } = toHttpError(error);
    return c.json({ error: { code, message } }, status as 400);
  });
  const server = await listen(app.fetch, host, options.port);
  return {
    ...server,
    close: async () => {
      stop();
      await server.close();
    },
  };
}
