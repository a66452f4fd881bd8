import type { Hono } from "hono";
import {
  BULK_MAX_RUNS,
  bulkBody,
  cancelBody,
  runCountQuery,
  runCostsQuery,
  forkBody,
  journalEntryParam,
  journalQuery,
  listRunsQuery,
  retryBody,
  runIdParam,
  sendEventBody,
  startRunBody,
  stuckRunsQuery,
} from "../../core/api-schemas.js";
import type { Engine, ListRunsOptions } from "../../engine/engine.js";
import type { AuditStore, RunStore } from "../../core/store.js";
import { FAILED_STATUSES, LIVE_STATUSES, type RunStatus } from "../../core/run.js";
import type { z } from "zod";
import { json, jsonObjectParts, parse, queryOf, readJson, streamedJson } from "../http.js";
import type { ResolvedServerOptions } from "../options.js";
import { audit } from "../auth/audit.js";
import { canSee, principalOf, requireVisible } from "../auth/principal.js";
import { ForbiddenError, JournalEntryNotFoundError, ValidationError } from "../../core/errors.js";
import { PREVIEW_BYTES } from "../../core/payloads.js";
import { encode } from "../../core/serialize.js";
import { randomUUID } from "node:crypto";
import type { Duration } from "../../core/duration.js";
import { parseTagFilters } from "../../core/tags.js";
import { readRunCosts } from "../../agent/run-costs.js";

/** Registers the run routes: start, list, count, bulk cancel/retry, stuck, get, journal, events, cancel, retry, fork. */
/** `store`: the audit log, where starts and controls are recorded, and the grouped run counts behind `GET /workflows`. */
export function registerRunRoutes(
  app: Hono,
  engine: Engine,
  options: ResolvedServerOptions,
  store: Pick<AuditStore, "appendAudit"> & Pick<RunStore, "countRuns">,
): void {
  app.post("/runs", async (c) => {
    const body = parse(startRunBody, await readJson(c, options.bodyLimitBytes), "body");
    const { namespace } = principalOf(c);
    // A namespaced token starts runs only inside its namespace; without a runId, one is made there.
    const runId = body.runId ?? (namespace === null ? undefined : `${namespace}/${randomUUID()}`);
    if (runId !== undefined && !canSee(principalOf(c), runId))
      throw new ForbiddenError(`namespace ${namespace}`, `This token may start runs only with ids that start with "${namespace}/".`);
    const { queue, concurrencyKey, priority } = body;
    const flow = {
      ...(queue === undefined ? {} : { queue }),
      ...(concurrencyKey === undefined ? {} : { concurrencyKey }),
      ...(priority === undefined ? {} : { priority }),
    };
    const live = {
      ...(body.tags === undefined ? {} : { tags: body.tags }),
      ...(body.deadline === undefined ? {} : { deadline: body.deadline as Duration }),
      ...(body.startAt === undefined ? {} : { startAt: new Date(body.startAt) }),
      ...(body.delay === undefined ? {} : { delay: body.delay as Duration }),
    };
    const handle = await engine.start(body.workflow, body.input ?? null, {
      ...(runId === undefined ? {} : { runId }),
      ...(body.version === undefined ? {} : { version: body.version }),
      ...flow,
      ...live,
    });
    const run = await engine.getRun(handle.runId);
    await audit(c, store, "run.start", handle.runId, { workflow: body.workflow, version: run.version, created: handle.created });
    return json(c, { created: handle.created, run }, handle.created ? 201 : 200);
  });

  app.get("/runs", async (c) => {
    const { tag: _, topLevel, ...query } = parse(listRunsQuery, queryOf(c), "query");
    const tagFilters = c.req.queries("tag") ?? [];
    if (tagFilters.length > 0) Object.assign(query, { tags: parseTagFilters(tagFilters, ":", "GET /runs: tag") });
    if (topLevel === "true") Object.assign(query, { topLevel: true });
    const { namespace } = principalOf(c);
    // A namespaced token sees only its namespace: filtered in the store's query, so pages stay full.
    // Previews, and a page bounded in bytes as well as rows: fetch a run (GET /runs/:id) for its whole input and output.
    // System runs (alert runs) are listed only when the workflow filter names their workflow.
    const bounded = { ...query, excludeSystem: true, previewBytes: PREVIEW_BYTES, maxBytes: PAGE_BYTES };
    const page = await engine.listRuns(namespace === null ? bounded : { ...bounded, runIdPrefix: `${namespace}/` });
    return streamedJson(c, jsonObjectParts({ ...page }, ["runs"]));
  });

  // Not under /runs/ (every /runs/<id> is a run): how many runs GET /runs lists with these filters, over all pages.
  app.get("/run-count", async (c) => {
    const { tag: _, topLevel, ...query } = parse(runCountQuery, queryOf(c), "query");
    const tagFilters = c.req.queries("tag") ?? [];
    const { namespace } = principalOf(c);
    return json(
      c,
      await engine.countRuns({
        ...query,
        excludeSystem: true,
        ...(tagFilters.length > 0 ? { tags: parseTagFilters(tagFilters, ":", "GET /run-count: tag") } : {}),
        ...(topLevel === "true" ? { topLevel: true } : {}),
        ...(namespace === null ? {} : { runIdPrefix: `${namespace}/` }),
      }),
    );
  });

  // The workflows that have runs (the store's, not only those live workers serve), for a listing's picker.
  app.get("/workflows", async (c) => {
    const { namespace } = principalOf(c);
    const groups = await store.countRuns(namespace === null ? undefined : { runIdPrefix: `${namespace}/` });
    const runs = new Map<string, number>();
    for (const group of groups) runs.set(group.workflow, (runs.get(group.workflow) ?? 0) + group.count);
    return json(c, { workflows: [...runs].map(([workflow, count]) => ({ workflow, runs: count })).sort((a, b) => (a.workflow < b.workflow ? -1 : 1)) });
  });

  // Cancel or retry many runs: the selected ones, or those a filter lists; each audited like one.
  for (const action of ["cancel", "retry"] as const) {
    app.post(`/bulk/${action}`, async (c) => {
      const body = parse(bulkBody, await readJson(c, options.bodyLimitBytes), "body");
      if (action === "retry" && body.reason !== undefined)
        throw new ValidationError("body.reason: only a bulk cancel takes a reason; leave it out for a retry");
      const principal = principalOf(c);
      const runIds = body.runIds ?? (await bulkTargets(engine, action, body.filter!, principal.namespace));
      for (const runId of runIds) requireVisible(c, runId);
      const done: string[] = [];
      const failed: { runId: string; error: string }[] = [];
      for (const runId of runIds) {
        try {
          if (action === "cancel") await engine.cancel(runId, body.reason);
          else await engine.retry(runId);
          await audit(c, store, `run.${action}`, runId, { bulk: true, ...(body.reason === undefined ? {} : { reason: body.reason }) });
          done.push(runId);
        } catch (error) {
          failed.push({ runId, error: error instanceof Error ? error.message : String(error) });
        }
      }
      return json(c, { done, failed });
    });
  }

  // Not under /runs/: every /runs/<id> is a run, even one named "stuck".
  app.get("/stuck-runs", async (c) => {
    const query = parse(stuckRunsQuery, queryOf(c), "query");
    const principal = principalOf(c);
    if (principal.namespace === null) return json(c, { runs: await engine.listStuckRuns(query) });
    // Filtered after the store's query: ask for its largest page, so foreign runs do not crowd this caller's out.
    // (There should never be stuck runs at all; past 1000 of them, a namespaced page may miss some.)
    const runs = (await engine.listStuckRuns({ ...query, limit: 1000 })).filter((run) => canSee(principal, run.runId));
    return json(c, { runs: runs.slice(0, query.limit ?? 100) });
  });

  app.get("/runs/:id", async (c) => {
    const { id } = parse(runIdParam, c.req.param(), "path");
    requireVisible(c, id);
    return json(c, await engine.getRun(id));
  });

  app.get("/runs/:id/journal", async (c) => {
    const { id } = parse(runIdParam, c.req.param(), "path");
    requireVisible(c, id);
    const query = parse(journalQuery, queryOf(c), "query");
    const limit = query.limit ?? 1000;
    const read = await engine.journal(id, { afterSeq: query.after ?? 0, limit, previewBytes: PREVIEW_BYTES });
    // Bounded in bytes as well as rows; an elided entry is fetched whole from GET /runs/:id/journal/:seq.
    const entries = capEntries(read, PAGE_BYTES);
    const last = entries[entries.length - 1];
    const page = { entries, ...((entries.length === limit || entries.length < read.length) && last ? { nextAfter: last.seq } : {}) };
    return streamedJson(c, jsonObjectParts(page, ["entries"]));
  });

  app.get("/runs/:id/costs", async (c) => {
    const { id } = parse(runIdParam, c.req.param(), "path");
    requireVisible(c, id);
    const query = parse(runCostsQuery, queryOf(c), "query");
    const principal = principalOf(c);
    return json(
      c,
      await readRunCosts(engine, id, Date.now(), { includeChildren: query.includeChildren === "true", canSee: (runId) => canSee(principal, runId) }),
    );
  });

  app.get("/runs/:id/journal/:seq", async (c) => {
    const { id, seq } = parse(journalEntryParam, c.req.param(), "path");
    requireVisible(c, id);
    const [entry] = await engine.journal(id, { afterSeq: seq - 1, limit: 1 });
    if (!entry || entry.seq !== seq) throw new JournalEntryNotFoundError(id, seq);
    return json(c, entry);
  });

  app.post("/runs/:id/events", async (c) => {
    const { id } = parse(runIdParam, c.req.param(), "path");
    requireVisible(c, id);
    const body = parse(sendEventBody, await readJson(c, options.bodyLimitBytes), "body");
    const result = await engine.sendEvent(id, body.type, body.payload ?? null, {
      ...(body.eventId === undefined ? {} : { eventId: body.eventId }),
      ...(body.secret ? { secret: true } : {}),
    });
    if (!result.duplicate) await audit(c, store, "run.event", id, { type: body.type, eventId: result.eventId });
    return json(c, result, result.duplicate ? 200 : 202);
  });

  app.post("/runs/:id/cancel", async (c) => {
    const { id } = parse(runIdParam, c.req.param(), "path");
    requireVisible(c, id);
    const body = parse(cancelBody, await readJson(c, options.bodyLimitBytes), "body");
    const run = await engine.cancel(id, body.reason);
    await audit(c, store, "run.cancel", id, body.reason === undefined ? null : { reason: body.reason });
    return json(c, run);
  });

  app.post("/runs/:id/retry", async (c) => {
    const { id } = parse(runIdParam, c.req.param(), "path");
    requireVisible(c, id);
    parse(retryBody, await readJson(c, options.bodyLimitBytes), "body");
    const run = await engine.retry(id);
    await audit(c, store, "run.retry", id);
    return json(c, run);
  });

  app.post("/runs/:id/fork", async (c) => {
    const { id } = parse(runIdParam, c.req.param(), "path");
    requireVisible(c, id);
    const body = parse(forkBody, await readJson(c, options.bodyLimitBytes), "body");
    // A namespaced token forks only into its namespace, like it starts runs.
    const { namespace } = principalOf(c);
    const runId = body.runId ?? (namespace === null ? undefined : `${namespace}/${randomUUID()}`);
    if (runId !== undefined && !canSee(principalOf(c), runId))
      throw new ForbiddenError(`namespace ${namespace}`, `This token may create runs only with ids that start with "${namespace}/".`);
    const handle = await engine.fork(id, { ...body, ...(runId === undefined ? {} : { runId }) });
    const run = await engine.getRun(handle.runId);
    if (handle.created) await audit(c, store, "run.fork", handle.runId, { from: id, atSeq: body.atSeq, patched: body.patch?.seq ?? null });
    return json(c, { created: handle.created, run }, handle.created ? 201 : 200);
  });
}

/** Statuses a bulk action applies to: cancel stops unfinished runs, retry restarts failed ones. */
const BULK_STATUSES: Record<"cancel" | "retry", readonly RunStatus[]> = { cancel: LIVE_STATUSES, retry: FAILED_STATUSES };

/** The runs a bulk action with `filter` applies to (at most {@link BULK_MAX_RUNS}; more is an error: narrow the filter). */
async function bulkTargets(
  engine: Engine,
  action: "cancel" | "retry",
  filter: z.infer<typeof bulkBody>["filter"] & object,
  namespace: string | null,
): Promise<string[]> {
  const allowed: readonly RunStatus[] = BULK_STATUSES[action];
  const status = (filter.status ?? allowed).filter((s) => allowed.includes(s));
  if (status.length === 0) return [];
  const query = {
    ...filter,
    status,
    // As GET /runs lists them: system runs only when the workflow filter names theirs.
    excludeSystem: true,
    createdAfter: filter.createdAfter === undefined ? undefined : new Date(filter.createdAfter),
    createdBefore: filter.createdBefore === undefined ? undefined : new Date(filter.createdBefore),
    ...(namespace === null ? {} : { runIdPrefix: `${namespace}/` }),
  };
  const clean = Object.fromEntries(Object.entries(query).filter(([, v]) => v !== undefined)) as ListRunsOptions;
  const runIds: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await engine.listRuns({ ...clean, limit: 1000, ...(cursor === undefined ? {} : { cursor }) });
    runIds.push(...page.runs.map((run) => run.runId));
    if (runIds.length > BULK_MAX_RUNS)
      throw new ValidationError(`body.filter matches more than ${BULK_MAX_RUNS} runs; narrow it (e.g. a time range) and repeat`);
    cursor = page.nextCursor;
  } while (cursor);
  return runIds;
}

/** Bytes a listing page (`GET /runs`, a journal page) may hold; past it the page ends with a cursor. */
const PAGE_BYTES = 4 * 1024 * 1024;

/** The first entries whose JSON fits in `maxBytes` (at least one). */
function capEntries<T>(entries: T[], maxBytes: number): T[] {
  let total = 0;
  for (let i = 0; i < entries.length; i++) {
    total += Buffer.byteLength(encode(entries[i]), "utf8") + 1;
    if (total > maxBytes && i > 0) return entries.slice(0, i);
  }
  return entries;
}
