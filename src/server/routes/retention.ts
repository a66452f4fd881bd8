import type { Hono } from "hono";
import { runIdParam } from "../../core/api-schemas.js";
import { ForbiddenError } from "../../core/errors.js";
import { exportRunQuery, importRunQuery, runExportSchema } from "../../core/run-export.js";
import type { Engine } from "../../engine/engine.js";
import type { AuditStore } from "../../core/store.js";
import { audit } from "../auth/audit.js";
import { canSee, principalOf, requireVisible } from "../auth/principal.js";
import { json, jsonObjectParts, parse, queryOf, readJson, streamedJson } from "../http.js";
import type { ResolvedServerOptions } from "../options.js";

/** Registers `GET /runs/:id/export` and `POST /runs/import` (admin scope with token auth; audited). */
/** `store`: the audit log, where exports and imports are recorded. */
export function registerRetentionRoutes(app: Hono, engine: Engine, options: ResolvedServerOptions, store: Pick<AuditStore, "appendAudit">): void {
  app.get("/runs/:id/export", async (c) => {
    const { id } = parse(runIdParam, c.req.param(), "path");
    requireVisible(c, id);
    const query = parse(exportRunQuery, queryOf(c), "query");
    const data = await engine.exportRun(id, { force: query.force === "true" });
    await audit(c, store, "run.export", id, { status: data.run.status });
    // Streamed entry by entry: an export of a long run is never one string in the server's memory.
    return streamedJson(c, jsonObjectParts(data, ["journal", "inbox", "humanRequests"]));
  });

  app.post("/runs/import", async (c) => {
    const query = parse(importRunQuery, queryOf(c), "query");
    const body = parse(runExportSchema, await readJson(c, options.bodyLimitBytes), "body");
    const target = query.as ?? body.run.runId;
    // Admin tokens have no namespace today; should one ever have, it imports only into it, like it starts runs.
    if (!canSee(principalOf(c), target)) {
      throw new ForbiddenError(
        `namespace ${principalOf(c).namespace}`,
        `This token may import runs only with ids in its namespace; pass ?as=<namespace>/<id>.`,
      );
    }
    const run = await engine.importRun(body, query.as === undefined ? {} : { as: query.as });
    await audit(c, store, "run.import", run.runId, { as: query.as ?? null });
    return json(c, run, 201);
  });
}
