import type { Hono } from "hono";
import { z } from "zod";
import type { Engine } from "../../engine/engine.js";
import { json, parse, queryOf } from "../http.js";
import { principalOf } from "../auth/principal.js";
import { overviewSummary, type OverviewStore } from "../overview/summary.js";
import { apiAlertSchema } from "../../core/alert-schemas.js";
import { listAlerts, type AlertListStore } from "../alerts/alert-list.js";

/** Query of `GET /overview`. */
export const overviewQuery = z
  .object({
    since: z
      .string()
      .refine((text) => /^\d{1,16}$/.test(text) || (/^\d{4}-\d\d-\d\d/.test(text) && !Number.isNaN(Date.parse(text))), {
        message: "must be an ISO 8601 date-time (2025-01-31T12:00:00Z) or epoch milliseconds",
      })
      .transform((text) => (/^\d+$/.test(text) ? Number(text) : Date.parse(text)))
      .optional()
      .describe("Failures and spend cover runs created since this time; default the last 24 hours. Status counts cover every run."),
  })
  .strict();

/** Loose shape of the answer, for the OpenAPI document (see OverviewSummary in src/server/overview/summary.ts). */
export const overviewResponse = z.object({
  since: z.string(),
  generatedAt: z.string(),
  counts: z.object({ total: z.number(), byStatus: z.record(z.string(), z.number()) }),
  failures: z.object({ scanned: z.number(), truncated: z.boolean(), patterns: z.array(z.unknown()), steps: z.array(z.unknown()) }),
  spend: z
    .object({ modelCalls: z.number(), costMicros: z.number(), truncated: z.boolean(), byWorkflow: z.array(z.unknown()), topRuns: z.array(z.unknown()) })
    .loose(),
  slowest: z.array(z.unknown()),
  stuck: z.array(z.unknown()),
  human: z.object({ pending: z.number(), answered: z.number() }).loose(),
  workers: z.number(),
  alerts: z.array(apiAlertSchema).nullable().describe("The 10 newest alerts; null for a namespaced token (alerts span namespaces)."),
});

/**
 * Registers `GET /overview`: the dashboard's overview in one request (counts by status over all
 * runs, failures grouped by pattern and model spend since a time, slowest and stuck runs, human
 * input, workers, the newest alerts). A namespaced token sees only its namespace's runs (workers are
 * shared; alerts are left out).
 */
/** `store`: the grouped counts and completed steps the overview reads beside the engine. */
export function registerOverviewRoute(app: Hono, engine: Engine, store: OverviewStore & AlertListStore): void {
  app.get("/overview", async (c) => {
    const query = parse(overviewQuery, queryOf(c), "query");
    const { namespace } = principalOf(c);
    const now = Date.now();
    const [summary, alerts] = await Promise.all([
      overviewSummary(engine, store, query.since ?? now - 24 * 3_600_000, now, namespace === null ? null : `${namespace}/`),
      namespace === null ? listAlerts(store, { limit: 10 }) : null,
    ]);
    return json(c, { ...summary, alerts });
  });
}
