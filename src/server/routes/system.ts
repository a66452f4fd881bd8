import type { Hono } from "hono";
import { workersQuery } from "../../core/api-schemas.js";
import { ForbiddenError } from "../../core/errors.js";
import { principalOf } from "../auth/principal.js";
import type { Engine } from "../../engine/engine.js";
import { json, parse, queryOf } from "../http.js";
import { EngineMetrics } from "../metrics/engine-metrics.js";
import { PROMETHEUS_CONTENT_TYPE } from "../metrics/prometheus.js";
import { openApiDocument } from "../openapi.js";
import { workerView } from "../wire.js";

/** Registers workers, versions, health, metrics and the OpenAPI description. */
export function registerSystemRoutes(app: Hono, engine: Engine): void {
  // Counting starts with the server, so the counters cover everything its engine did since.
  const metrics = new EngineMetrics(engine);
  app.get("/metrics", async (c) => c.body(await metrics.render(), 200, { "content-type": PROMETHEUS_CONTENT_TYPE }));

  app.get("/workers", async (c) => {
    const query = parse(workersQuery, queryOf(c), "query");
    const workers = await engine.listWorkers(query);
    return json(c, { workers: workers.map(workerView) });
  });

  // Schedules, queue counts and version counts span every tenant's runs, so a namespaced token may not read them.
  const everyNamespace = (c: Parameters<typeof principalOf>[0], what: string): void => {
    if (principalOf(c).namespace !== null) throw new ForbiddenError("read", `${what} cover runs of every namespace: use a token without a namespace.`);
  };
  app.get("/schedules", async (c) => {
    everyNamespace(c, "Schedules (their last runs)");
    return json(c, { schedules: await engine.listSchedules() });
  });
  app.get("/queues", async (c) => {
    everyNamespace(c, "Queue counts");
    return json(c, { queues: await engine.queueStates() });
  });
  app.get("/versions", async (c) => {
    everyNamespace(c, "Version counts");
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
