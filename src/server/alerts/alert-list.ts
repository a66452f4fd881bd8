/** Recent alerts as `GET /alerts` and the overview show them: newest first, with their delivery status. */
import type { AlertPayload, ApiAlert } from "../../core/alert-schemas.js";
import { decode } from "../../core/serialize.js";
import type { OutboxStore, RunStore } from "../../core/store.js";
import { ALERT_WORKFLOW, alertMessageId } from "./alert-fire.js";

/** The store slices {@link listAlerts} reads: alert runs and their outbox messages. */
export type AlertListStore = Pick<RunStore, "listRuns"> & Pick<OutboxStore, "getOutboxMessage">;

/** The newest `limit` alerts (of one rule, with `rule`), newest first. */
export async function listAlerts(store: AlertListStore, query: { limit: number; rule?: string | undefined }): Promise<ApiAlert[]> {
  const page = await store.listRuns({ workflow: ALERT_WORKFLOW, limit: query.limit, ...(query.rule ? { tags: { rule: query.rule } } : {}) });
  const alerts: ApiAlert[] = [];
  for (const run of page.runs) {
    const payload = decode<AlertPayload>(run.input);
    const message = await store.getOutboxMessage(alertMessageId(run.runId));
    alerts.push({ ...payload, runId: run.runId, messageId: message?.messageId ?? null, delivery: message?.status ?? "none" });
  }
  return alerts;
}
