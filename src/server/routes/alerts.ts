import type { Hono } from "hono";
import { z } from "zod";
import { alertListQuery, alertRuleSetSchema } from "../../core/alert-schemas.js";
import type { AuditStore } from "../../core/store.js";
import { principalOf } from "../auth/principal.js";
import { listAlerts, type AlertListStore } from "../alerts/alert-list.js";
import { readAlertRules, writeAlertRules, type StoredAlertRules } from "../alerts/alert-rules.js";
import { json, parse, queryOf, readJson } from "../http.js";
import { requireEveryNamespace } from "../metrics/metrics-route.js";
import type { ResolvedServerOptions } from "../options.js";

/** The store slices the alert routes use: alert runs, their outbox messages, and the audit log that holds the rules. */
export type AlertRouteStore = AlertListStore & Pick<AuditStore, "listAudit" | "appendAudit">;

/**
 * Registers `GET /alerts` (recent alerts, newest first, with their delivery status; read scope, not for
 * namespaced tokens: alerts name runs of every namespace), and `GET /alerts/rules` and
 * `POST /alerts/rules` (replace the rule set; audited), both admin scope under token auth.
 */
export function registerAlertRoutes(app: Hono, options: ResolvedServerOptions, store: AlertRouteStore): void {
  app.get("/alerts", async (c) => {
    requireEveryNamespace(c, "Alerts");
    const query = parse(alertListQuery, queryOf(c), "query");
    return json(c, { alerts: await listAlerts(store, query) });
  });
  app.get("/alerts/rules", async (c) => {
    parse(z.object({}).strict(), queryOf(c), "query");
    return json(c, rulesView(await readAlertRules(store)));
  });
  app.post("/alerts/rules", async (c) => {
    const body = parse(alertRuleSetSchema, await readJson(c, options.bodyLimitBytes), "body");
    return json(c, rulesView(await writeAlertRules(store, body.rules, principalOf(c).actor, Date.now())));
  });
}

function rulesView(stored: StoredAlertRules) {
  return { rules: stored.rules, updatedAt: stored.updatedAt, updatedBy: stored.updatedBy, source: stored.source };
}
