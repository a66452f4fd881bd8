import type { Hono } from "hono";
import { publishedValueResponse, requestBody, requestResponse, runNameParam } from "../../core/live-schemas.js";
import type { Engine } from "../../engine/engine.js";
import type { AuditStore } from "../../core/store.js";
import { json, parse, readJson } from "../http.js";
import type { ResolvedServerOptions } from "../options.js";
import { audit } from "../auth/audit.js";
import { requireVisible } from "../auth/principal.js";
import { ValueNotFoundError } from "../../core/errors.js";
import { randomUUID } from "node:crypto";

/** Schemas of the live-run routes, for the OpenAPI description. */
export const liveRouteSchemas = { publishedValueResponse, requestBody, requestResponse, runNameParam };

/**
 * Registers the routes that talk to a live run (docs/live-runs.md): `GET /runs/:id/values/:name` reads
 * the latest value the run published, from the store, without waking it (read scope); `POST
 * /runs/:id/requests/:name` sends a request to its `ctx.handle` handler and answers with the reply
 * (write scope, audited once per new request id).
 */
/** `store`: the audit log, where requests to runs are recorded. */
export function registerLiveRoutes(app: Hono, engine: Engine, options: ResolvedServerOptions, store: Pick<AuditStore, "appendAudit">): void {
  app.get("/runs/:id/values/:name", async (c) => {
    const { id, name } = parse(runNameParam, c.req.param(), "path");
    requireVisible(c, id);
    const found = await engine.getPublished(id, name);
    if (!found) throw new ValueNotFoundError(id, name);
    return json(c, { name, value: await engine.redact(id, found.value), seq: found.seq, at: found.at });
  });

  app.post("/runs/:id/requests/:name", async (c) => {
    const { id, name } = parse(runNameParam, c.req.param(), "path");
    requireVisible(c, id);
    const body = parse(requestBody, await readJson(c, options.bodyLimitBytes), "body");
    const requestId = body.requestId ?? randomUUID();
    await audit(c, store, "run.request", id, { name, requestId });
    const reply = await engine.request(id, name, body.payload ?? null, { requestId, ...(body.timeoutMs === undefined ? {} : { timeoutMs: body.timeoutMs }) });
    return json(c, { requestId, reply: await engine.redact(id, reply) });
  });
}
