import type { Hono } from "hono";
import { z } from "zod";
import { costsResponse } from "../../core/cost-schemas.js";
import { workflowCosts } from "../../agent/workflow-costs.js";
import type { Engine } from "../../engine/engine.js";
import { principalOf } from "../auth/principal.js";
import { json, parse, queryOf } from "../http.js";

const instant = z
  .string()
  .refine((text) => /^\d{1,16}$/.test(text) || (/^\d{4}-\d\d-\d\d/.test(text) && !Number.isNaN(Date.parse(text))), {
    message: "must be an ISO 8601 date-time (2025-01-31T12:00:00Z) or epoch milliseconds",
  })
  .transform((text) => (/^\d+$/.test(text) ? Number(text) : Date.parse(text)));

export { costsResponse };

/** Query of `GET /costs`. */
export const costsQuery = z
  .object({
    since: instant.optional().describe("Runs created at or after this time; default the last 24 hours."),
    until: instant.optional().describe("Runs created before this time; default now."),
    workflow: z.string().min(1).max(200).optional().describe("Only this workflow's runs."),
  })
  .strict();

/**
 * Registers `GET /costs`: per-workflow totals of worker time, step time, journal bytes, tool calls by
 * tool, the time people took and model spend, over the runs created in a window (bounded: the newest
 * 2,000). A namespaced token sees only its namespace's runs.
 */
export function registerCostsRoute(app: Hono, engine: Engine): void {
  app.get("/costs", async (c) => {
    const query = parse(costsQuery, queryOf(c), "query");
    const { namespace } = principalOf(c);
    const now = Date.now();
    return json(
      c,
      await workflowCosts(engine, {
        since: query.since ?? now - 24 * 3_600_000,
        ...(query.until === undefined ? {} : { until: query.until }),
        ...(query.workflow ? { workflow: query.workflow } : {}),
        ...(namespace === null ? {} : { runIdPrefix: `${namespace}/` }),
        now,
      }),
    );
  });
}
