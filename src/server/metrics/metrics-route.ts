import type { Context, Hono } from "hono";
import { ForbiddenError } from "../../core/errors.js";
import type { Engine } from "../../engine/engine.js";
import { principalOf } from "../auth/principal.js";
import { EngineMetrics, type MetricsStore, type MetricsTagLabels } from "./engine-metrics.js";
import { PROMETHEUS_CONTENT_TYPE } from "./prometheus.js";

/**
 * Throws 403 for a namespaced caller: what this route returns covers runs of every namespace
 * (schedules, queue and version counts, metrics), so only a token without a namespace may read it.
 */
export function requireEveryNamespace(c: Context, what: string): void {
  if (principalOf(c).namespace !== null) throw new ForbiddenError("read", `${what} cover runs of every namespace: use a token without a namespace.`);
}

/**
 * Registers `GET /metrics` (Prometheus text) for this engine. Counting starts here, so the counters
 * cover everything the engine's process did since. Returns a function that stops counting.
 */
export function registerMetricsRoute(app: Hono, engine: Engine, store: MetricsStore, tagLabels?: MetricsTagLabels): () => void {
  const metrics = new EngineMetrics(engine, store, tagLabels);
  app.get("/metrics", async (c) => {
    requireEveryNamespace(c, "Metrics (workflow names, run counts)");
    return c.body(await metrics.render(), 200, { "content-type": PROMETHEUS_CONTENT_TYPE });
  });
  return () => metrics.close();
}
