import type { Hono } from "hono";
import { publishEventBody } from "../../core/api-schemas.js";
import { ForbiddenError } from "../../core/errors.js";
import type { Engine } from "../../engine/engine.js";
import type { AuditStore } from "../../core/store.js";
import { audit } from "../auth/audit.js";
import { principalOf } from "../auth/principal.js";
import { json, parse, readJson } from "../http.js";
import type { ResolvedServerOptions } from "../options.js";

/**
 * `POST /events`: publishes an event to no run in particular (`engine.publishEvent`): starts the
 * workflows whose `on` names its type and cancels the runs a `cancelOn` matches. 202 when it started
 * a run, 200 otherwise (a repeated event id starts nothing). Namespaced tokens are refused: the runs
 * it starts and cancels are not confined to their namespace.
 */
/** `store`: the audit log, where published events are recorded. */
export function registerEventRoutes(app: Hono, engine: Engine, options: ResolvedServerOptions, store: Pick<AuditStore, "appendAudit">): void {
  app.post("/events", async (c) => {
    if (principalOf(c).namespace !== null) {
      throw new ForbiddenError(
        "write",
        "A namespaced API token cannot publish events: the runs an event starts or cancels are not in its namespace. Use a token without a namespace.",
      );
    }
    const body = parse(publishEventBody, await readJson(c, options.bodyLimitBytes), "body");
    const result = await engine.publishEvent(body.type, body.payload ?? null, body.eventId === undefined ? {} : { eventId: body.eventId });
    const started = result.runs.filter((r) => r.created).map((r) => r.runId);
    if (started.length > 0 || result.cancelled.length > 0) {
      await audit(c, store, "event.publish", null, { type: body.type, eventId: result.eventId, started, cancelled: result.cancelled });
    }
    return json(c, result, started.length > 0 ? 202 : 200);
  });
}
