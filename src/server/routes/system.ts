import type { Hono } from "hono";
import { workersQuery } from "../../core/api-schemas.js";
import type { Engine } from "../../engine/engine.js";
import { principalOf } from "../auth/principal.js";
import { json, parse, queryOf } from "../http.js";
import type { MetricsStore, MetricsTagLabels } from "../metrics/engine-metrics.js";
import { registerMetricsRoute, requireEveryNamespace } from "../metrics/metrics-route.js";
import { openApiDocument } from "../openapi.js";
import { workerView } from "../wire.js";

/** Registers workers, versions, health, metrics and the OpenAPI description. */
/** `store`: what `GET /metrics` reads beside the engine. */
export function registerSystemRoutes(app: Hono, engine: Engine, store: MetricsStore, metricsTags?: MetricsTagLabels): void {
  registerMetricsRoute(app, engine, store, metricsTags);

  // Workers are shared, not per-namespace: a namespaced token sees only their namespace view (that
  // they are alive and which workflows it may start), not hosts, pids, ids or every tenant's load.
  app.get("/workers", async (c) => {
    const query = parse(workersQuery, queryOf(c), "query");
    const workers = await engine.listWorkers(query);
    if (principalOf(c).namespace === null) return json(c, { workers: workers.map(workerView) });
    return json(c, { workers: workers.map((worker, i) => ({ ...workerView(worker), workerId: `worker-${i + 1}`, host: "", pid: 0, runsHeld: 0 })) });
  });

  // Schedules, queue counts, version counts and metrics span every tenant's runs, so a namespaced token may not read them.
  app.get("/schedules", async (c) => {
    requireEveryNamespace(c, "Schedules (their last runs)");
    return json(c, { schedules: await engine.listSchedules() });
  });
  app.get("/queues", async (c) => {
    requireEveryNamespace(c, "Queue counts");
    return json(c, { queues: await engine.listQueues() });
  });
  app.get("/versions", async (c) => {
    requireEveryNamespace(c, "Version counts");
    return json(c, { versions: await engine.listVersions() });
  });

  // Touches the store, so a load balancer sees 503 when the database is gone.
  app.get("/health", async (c) => {
    await engine.listRuns({ limit: 1 });
    return json(c, { status: "ok" });
  });

  let document: string | undefined;
  app.get("/openapi.json", (c) => {
    document ??= JSON.stringify(openApiDocument());
    return c.body(document, 200, { "content-type": "application/json; charset=utf-8" });
  });
}
