import type { Hono } from "hono";
import { alertListQuery, alertRuleSetSchema, type ApiAlert, type AlertPayload } from "../../core/alert-schemas.js";
import { decode } from "../../core/serialize.js";
import type { AuditStore, OutboxStore, RunStore } from "../../core/store.js";
import { principalOf } from "../auth/principal.js";
import { ALERT_WORKFLOW, alertMessageId } from "../alerts/alert-fire.js";
import { readAlertRules, writeAlertRules, type StoredAlertRules } from "../alerts/alert-rules.js";
import { json, parse, queryOf, readJson } from "../http.js";
import type { ResolvedServerOptions } from "../options.js";

/** The store slices the alert routes use: alert runs, their outbox messages, and the audit log that holds the rules. */
export type AlertRouteStore = Pick<RunStore, "listRuns"> & Pick<OutboxStore, "getOutboxMessage"> & Pick<AuditStore, "listAudit" | "appendAudit">;

/**
 * Registers `GET /alerts` (recent alerts, newest first, with their delivery status), `GET /alerts/rules`
 * and `POST /alerts/rules` (replace the rule set; audited). Admin scope under token auth: alerts name
 * runs of every namespace.
 */
export function registerAlertRoutes(app: Hono, options: ResolvedServerOptions, store: AlertRouteStore): void {
  app.get("/alerts", async (c) => {
    const query = parse(alertListQuery, queryOf(c), "query");
    const page = await store.listRuns({
      workflow: ALERT_WORKFLOW,
      limit: query.limit,
      ...(query.rule ? { tags: { rule: query.rule } } : {}),
    });
    const alerts: ApiAlert[] = [];
    for (const run of page.runs) {
      const payload = decode<AlertPayload>(run.input);
      const message = await store.getOutboxMessage(alertMessageId(run.runId));
      alerts.push({ ...payload, runId: run.runId, messageId: message?.messageId ?? null, delivery: message?.status ?? "none" });
    }
    return json(c, { alerts });
  });
  app.get("/alerts/rules", async (c) => {
    parse(alertListQuery.pick({}).strict(), queryOf(c), "query");
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
