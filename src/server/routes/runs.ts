import type { Hono } from "hono";
import {
  cancelBody,
  forkBody,
  journalQuery,
  listRunsQuery,
  retryBody,
  runIdParam,
  sendEventBody,
  startRunBody,
  stuckRunsQuery,
} from "../../core/api-schemas.js";
import type { Engine } from "../../engine/engine.js";
import { json, parse, queryOf, readJson } from "../http.js";
import type { ResolvedServerOptions } from "../options.js";

/** Registers the run routes: start, list, stuck, get, journal, events, cancel, retry, fork. */
export function registerRunRoutes(app: Hono, engine: Engine, options: ResolvedServerOptions): void {
  app.post("/runs", async (c) => {
    const body = parse(startRunBody, await readJson(c, options.bodyLimitBytes), "body");
    const handle = await engine.start(body.workflow, body.input ?? null, body.runId === undefined ? {} : { runId: body.runId });
    const run = await engine.getRun(handle.runId);
    return json(c, { created: handle.created, run }, handle.created ? 201 : 200);
  });

  app.get("/runs", async (c) => {
    const query = parse(listRunsQuery, queryOf(c), "query");
    return json(c, await engine.listRuns(query));
  });

  // Before /runs/:id, so "stuck" is not taken for a run id.
  app.get("/runs/stuck", async (c) => {
    const query = parse(stuckRunsQuery, queryOf(c), "query");
    return json(c, { runs: await engine.listStuckRuns(query) });
  });

  app.get("/runs/:id", async (c) => {
    const { id } = parse(runIdParam, c.req.param(), "path");
    return json(c, await engine.getRun(id));
  });

  app.get("/runs/:id/journal", async (c) => {
    const { id } = parse(runIdParam, c.req.param(), "path");
    const query = parse(journalQuery, queryOf(c), "query");
    const limit = query.limit ?? 1000;
    const entries = await engine.journal(id, { afterSeq: query.after ?? 0, limit });
    const last = entries[entries.length - 1];
    return json(c, { entries, ...(entries.length === limit && last ? { nextAfter: last.seq } : {}) });
  });

  app.post("/runs/:id/events", async (c) => {
    const { id } = parse(runIdParam, c.req.param(), "path");
    const body = parse(sendEventBody, await readJson(c, options.bodyLimitBytes), "body");
    const result = await engine.sendEvent(id, body.type, body.payload ?? null, body.eventId === undefined ? {} : { eventId: body.eventId });
    return json(c, result, result.duplicate ? 200 : 202);
  });

  app.post("/runs/:id/cancel", async (c) => {
    const { id } = parse(runIdParam, c.req.param(), "path");
    const body = parse(cancelBody, await readJson(c, options.bodyLimitBytes), "body");
    return json(c, await engine.cancel(id, body.reason));
  });

  app.post("/runs/:id/retry", async (c) => {
    const { id } = parse(runIdParam, c.req.param(), "path");
    parse(retryBody, await readJson(c, options.bodyLimitBytes), "body");
    return json(c, await engine.retry(id));
  });

  app.post("/runs/:id/fork", async (c) => {
    const { id } = parse(runIdParam, c.req.param(), "path");
    const body = parse(forkBody, await readJson(c, options.bodyLimitBytes), "body");
    const handle = await engine.fork(id, body);
    const run = await engine.getRun(handle.runId);
    return json(c, { created: handle.created, run }, handle.created ? 201 : 200);
  });
}
