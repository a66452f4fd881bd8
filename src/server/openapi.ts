import * as live from "../core/live-schemas.js";
import * as outboxApi from "../core/outbox.js";
import { overviewQuery, overviewResponse } from "./routes/overview.js";
import { costsQuery, costsResponse } from "./routes/costs.js";
import { z } from "zod";
import * as api from "../core/api-schemas.js";
import * as operator from "../core/console-schemas.js";
import { outboxMessageParam } from "./routes/outbox.js";
import * as alertApi from "../core/alert-schemas.js";
import { exportRunQuery, importRunQuery, runExportSchema } from "../core/run-export.js";
import { isPublicPath } from "./auth/middleware.js";

/** One route as the OpenAPI description tells it. Paths use Hono's `:param` form. */
interface RouteDoc {
  method: "get" | "post";
  path: string;
  summary: string;
  description?: string;
  params?: z.ZodObject;
  query?: z.ZodObject;
  body?: z.ZodType;
  ok: { status: number; description: string; schema?: z.ZodType; contentType?: string }[];
  errors: number[];
}

const ERROR_TEXT: Record<number, string> = {
  400: "Invalid input: bad JSON, or a body, query or path that fails its schema (code INVALID_INPUT).",
  401: "With `--auth tokens`: no API token, or a malformed, unknown or revoked one, a used or stale ?ticket=, or a ?token= in the URL (UNAUTHORIZED); a token past its expiry (TOKEN_EXPIRED). For webhooks, a bad Cairn-Signature.",
  403: "The API token lacks the scope this route needs (FORBIDDEN); or a write sent by a web page of another origin (CROSS_ORIGIN_REFUSED).",
  415: "A request body not sent as `Content-Type: application/json` (UNSUPPORTED_MEDIA_TYPE).",
  421: "The Host header names a host the server does not answer for: DNS rebinding is refused (HOST_NOT_ALLOWED). Add it with `cairn serve --allowed-host`.",
  404: "Unknown run, human request or route (RUN_NOT_FOUND, HUMAN_REQUEST_NOT_FOUND, ROUTE_NOT_FOUND).",
  409: "Conflict: a different run with this id, a finished run, a run that has not failed, an answered request.",
  413: "The request body is over the server's limit (PAYLOAD_TOO_LARGE).",
  422: "Well-formed but not acceptable: unknown workflow, an answer that is not one of the options, a value that cannot be stored.",
  503: "The store is unavailable or the engine is closing (STORE_UNAVAILABLE, ENGINE_CLOSED). Retry with the same idempotency keys.",
  504: "No reply in time (TIMEOUT): the request stays delivered; ask again with the same requestId.",
};

/** Every route of `createServer`. A test checks this table against the app's routes. */
export const ROUTES: RouteDoc[] = [
  {
    method: "post",
    path: "/runs",
    summary: "Start a run (idempotent by runId)",
    description:
      "201 when the run was created; 200 with the existing run when one with this runId, workflow and input exists; 409 when it exists with another workflow or input.",
    body: api.startRunBody,
    ok: [
      { status: 201, description: "Created.", schema: api.startRunResponse },
      { status: 200, description: "The run already existed with this workflow and input.", schema: api.startRunResponse },
    ],
    errors: [400, 409, 413, 422, 503],
  },
  {
    method: "get",
    path: "/runs",
    summary: "List runs, newest first",
    query: api.listRunsQuery,
    ok: [{ status: 200, description: "A page of runs; pass nextCursor as cursor for the next.", schema: api.runPageSchema }],
    errors: [400, 422, 503],
  },
  {
    method: "get",
    path: "/run-count",
    summary: "How many runs GET /runs lists with these filters, over all pages",
    description: "Without q, exact. With q, candidates are checked against redacted views up to a limit; past it `exact` is false and `total` a lower bound.",
    query: api.runCountQuery,
    ok: [{ status: 200, description: "The count.", schema: z.object({ total: z.number().int(), exact: z.boolean() }) }],
    errors: [400, 422, 503],
  },
  {
    method: "get",
    path: "/workflows",
    summary: "The workflows that have runs in the store, with how many",
    ok: [
      { status: 200, description: "Workflows by name.", schema: z.object({ workflows: z.array(z.object({ workflow: z.string(), runs: z.number().int() })) }) },
    ],
    errors: [503],
  },
  {
    method: "post",
    path: "/bulk/cancel",
    summary: "Cancel the selected runs, or every unfinished run a filter lists (each audited as run.cancel)",
    body: api.bulkBody,
    ok: [{ status: 200, description: "Which runs were cancelled and which not, with why.", schema: api.bulkResponse }],
    errors: [400, 403, 413, 503],
  },
  {
    method: "post",
    path: "/bulk/retry",
    summary: "Retry the selected runs, or every failed run a filter lists (each audited as run.retry)",
    body: api.bulkBody,
    ok: [{ status: 200, description: "Which runs were retried and which not, with why.", schema: api.bulkResponse }],
    errors: [400, 403, 413, 503],
  },
  {
    method: "get",
    path: "/stuck-runs",
    summary: "Runs that nothing will move (there should never be any)",
    query: api.stuckRunsQuery,
    ok: [{ status: 200, description: "Stuck runs.", schema: z.object({ runs: z.array(api.apiRunSchema) }) }],
    errors: [400, 503],
  },
  {
    method: "get",
    path: "/overview",
    summary: "The dashboard's overview: counts by status, failures by pattern, spend since a time",
    query: overviewQuery,
    ok: [{ status: 200, description: "The overview.", schema: overviewResponse }],
    errors: [400, 403, 503],
  },
  {
    method: "get",
    path: "/costs",
    summary: "Costs per workflow (worker time, journal bytes, tool calls, people's time, model spend) over the runs created in a window",
    query: costsQuery,
    ok: [{ status: 200, description: "Totals by workflow.", schema: costsResponse }],
    errors: [400, 403, 503],
  },
  {
    method: "get",
    path: "/runs/:id",
    summary: "Get a run",
    params: api.runIdParam,
    ok: [{ status: 200, description: "The run.", schema: api.apiRunSchema }],
    errors: [400, 404, 503],
  },
  {
    method: "get",
    path: "/runs/:id/journal",
    summary: "A run's journal, paginated by seq",
    params: api.runIdParam,
    query: api.journalQuery,
    ok: [
      {
        status: 200,
        description:
          "Entries after `after`, in seq order; at most 4 MiB of them (then `nextAfter`). An entry larger than 8 KiB has `data: null` and `elided` (its size): fetch it from /runs/:id/journal/:seq.",
        schema: api.journalPageSchema,
      },
    ],
    errors: [400, 404, 503],
  },
  {
    method: "get",
    path: "/runs/:id/journal/:seq",
    summary: "One journal entry, whole",
    params: api.journalEntryParam,
    ok: [{ status: 200, description: "The entry, with its data however large.", schema: api.apiJournalEntrySchema }],
    errors: [400, 404, 503],
  },
  {
    method: "get",
    path: "/runs/:id/costs",
    summary: "What a run cost: worker and step time, journal bytes, tool calls by tool, time people took, model spend",
    params: api.runIdParam,
    query: api.runCostsQuery,
    ok: [
      {
        status: 200,
        description: "The run's costs, folded from its journal (also while it runs); with includeChildren=true, summed with its descendants'.",
        schema: api.runCostsSchema,
      },
    ],
    errors: [400, 404, 503],
  },
  {
    method: "get",
    path: "/runs/:id/stream",
    summary: "A run's journal as Server-Sent Events, live, resumable",
    description:
      "Each entry is `event: entry` with `id: <seq>` and the entry as JSON data. Reconnect with `Last-Event-ID` (or `?after=`) to get exactly the entries after it. " +
      "Comments (`: keep-alive`) are sent while idle. When the run is terminal and its last entry was sent, `event: end` with `{ status, lastSeq }` ends the stream. " +
      "`event: error` with `{ error: { code, message } }` ends it on a failure; reconnect.",
    params: api.runIdParam,
    query: api.streamQuery,
    ok: [{ status: 200, description: "An event stream.", contentType: "text/event-stream" }],
    errors: [400, 404, 503],
  },
  {
    method: "post",
    path: "/runs/:id/events",
    summary: "Send an event to a run (idempotent by eventId)",
    params: api.runIdParam,
    body: api.sendEventBody,
    ok: [
      { status: 202, description: "Buffered for the run.", schema: api.sendEventResponse },
      { status: 200, description: "An event with this eventId was already delivered; nothing changed.", schema: api.sendEventResponse },
    ],
    errors: [400, 404, 409, 413, 422, 503],
  },
  {
    method: "get",
    path: "/runs/:id/values/:name",
    summary: "The latest value a run published under a name (ctx.publish), read without waking the run",
    params: live.runNameParam,
    ok: [{ status: 200, description: "The value, with the seq and time of its publish.", schema: live.publishedValueResponse }],
    errors: [400, 404, 503],
  },
  {
    method: "post",
    path: "/runs/:id/requests/:name",
    summary: "Send a request to the run's ctx.handle handler and get its reply (idempotent by requestId)",
    description:
      "Delivered like an event; the handler's reply is journaled, so the same requestId always gets the same reply and the handler runs once. " +
      "422 (REQUEST_FAILED) when the handler threw; 409 (RUN_FINISHED) when the run ended without replying; 504 (TIMEOUT) when no reply came in timeoutMs (ask again with the same requestId). Needs the write scope.",
    params: live.runNameParam,
    body: live.requestBody,
    ok: [{ status: 200, description: "The reply.", schema: live.requestResponse }],
    errors: [400, 404, 409, 413, 422, 503, 504],
  },
  {
    method: "post",
    path: "/events",
    summary: "Publish an event: start the workflows whose `on` names its type, cancel runs its `cancelOn` matches",
    description:
      "Runs started get the id `<workflow>:<eventId>`; publishing an event id again starts nothing new (200). " +
      "A payload that fails the type's defineEvent schema is refused with 422 `EVENT_INVALID` and its `issues`. Namespaced tokens may not publish (403).",
    body: api.publishEventBody,
    ok: [
      { status: 202, description: "At least one run was started.", schema: api.publishEventResponse },
      { status: 200, description: "Nothing new was started (no subscriber, or a repeated event id).", schema: api.publishEventResponse },
    ],
    errors: [400, 403, 413, 422, 503],
  },
  {
    method: "post",
    path: "/runs/:id/cancel",
    summary: "Cancel a live run",
    params: api.runIdParam,
    body: api.cancelBody,
    ok: [
      {
        status: 200,
        description: "The cancelled run; `pending` (journal: `run.cancelling`) when a worker must first run its compensations and release its resources.",
        schema: api.apiRunSchema,
      },
    ],
    errors: [400, 404, 409, 413, 503],
  },
  {
    method: "post",
    path: "/runs/:id/retry",
    summary: "Resume a failed (or compensation_failed) run from its journal",
    params: api.runIdParam,
    body: api.retryBody,
    ok: [{ status: 200, description: "The run, pending again.", schema: api.apiRunSchema }],
    errors: [400, 404, 409, 413, 503],
  },
  {
    method: "post",
    path: "/runs/:id/fork",
    summary: "Fork a run at a journal seq (time travel)",
    description:
      "Creates a new run whose journal is this run's up to atSeq (optionally with one step result patched) and which continues from there under the server's current code. The original is untouched. 201 when created; 200 when a fork with this runId, source, atSeq and patch exists; 409 when the runId is taken by another run; 422 when atSeq or the patch does not fit the journal (past its end, inside a child run or an unanswered human request, a patch of anything but a step.completed at or before atSeq).",
    params: api.runIdParam,
    body: api.forkBody,
    ok: [
      { status: 201, description: "The new run, pending.", schema: api.forkResponse },
      { status: 200, description: "This fork already existed.", schema: api.forkResponse },
    ],
    errors: [400, 404, 409, 413, 422, 503],
  },
  {
    method: "get",
    path: "/runs/:id/export",
    summary: "Export a run with everything needed to restore it (admin)",
    description:
      "The run, its whole journal, inbox and human requests as a versioned export file (format cairn.run-export), for POST /runs/import or `cairn import`. Secret step results are included: admin scope. 409 (RUN_NOT_FINISHED) for a live run unless force=true.",
    params: api.runIdParam,
    query: exportRunQuery,
    ok: [{ status: 200, description: "The export file.", schema: runExportSchema }],
    errors: [400, 403, 404, 409, 503],
  },
  {
    method: "post",
    path: "/runs/import",
    summary: "Import an exported run (admin)",
    description:
      "Restores a run from an export file, all or nothing, with its status, journal seqs and times as exported. 400 for a file that is not a valid export; 409 when the run id (or one of its human request ids) exists: import it under another id with ?as=.",
    query: importRunQuery,
    body: runExportSchema,
    ok: [{ status: 201, description: "The imported run.", schema: api.apiRunSchema }],
    errors: [400, 403, 409, 413, 503],
  },
  {
    method: "get",
    path: "/human-requests",
    summary: "List questions for people",
    query: api.humanRequestsQuery,
    ok: [{ status: 200, description: "Human requests.", schema: api.humanRequestListSchema }],
    errors: [400, 503],
  },
  {
    method: "post",
    path: "/human-requests/:id/answer",
    summary: "Answer a human request",
    description:
      'The id is `<runId>:<op key>`; URL-encode it. The answer must be one of the request\'s options (action `answer`), or retry/skip/fail for a "did this happen?" request. With token auth the answer is recorded as given by the token (`token:<name>`), whatever `by` says. 409 HUMAN_REQUEST_CLOSED when the run finished before anyone answered; 422 for a value that cannot be stored (e.g. nested thousands of levels deep).',
    params: api.requestIdParam,
    body: api.answerBody,
    ok: [
      {
        status: 200,
        description: "The answered request; answering again is a no-op that returns the first answer (duplicate: true).",
        schema: api.answerResponse,
      },
    ],
    errors: [400, 404, 409, 413, 422, 503],
  },
  {
    method: "post",
    path: "/tokens",
    summary: "Create an API token (admin)",
    description: "The response holds the token text; it is shown only once. A namespaced token cannot be admin.",
    body: api.createTokenBody,
    ok: [{ status: 201, description: "Created.", schema: api.createTokenResponse }],
    errors: [400, 401, 403, 413, 422, 503],
  },
  {
    method: "get",
    path: "/tokens",
    summary: "List API tokens, revoked ones included (admin)",
    ok: [{ status: 200, description: "Tokens, without secrets.", schema: api.tokenListSchema }],
    errors: [400, 401, 403, 503],
  },
  {
    method: "post",
    path: "/tokens/:id/revoke",
    summary: "Revoke an API token (admin)",
    params: api.tokenIdParam,
    ok: [{ status: 200, description: "The revoked token.", schema: z.object({ record: api.apiTokenSchema }) }],
    errors: [400, 401, 403, 404, 503],
  },
  {
    method: "post",
    path: "/auth/tickets",
    summary: "A one-time ticket for one GET request (token auth)",
    description:
      "Only with `--auth tokens`. Send the token in the Authorization header; get a ticket (`cairn_ticket_…`) that stands in for it as `?ticket=` on one GET request within 60 s: " +
      "an EventSource stream, a download link, or the dashboard opened as /ui/?ticket=…. The token itself never goes in a URL (proxies log URLs). A ticket acts with its token's scopes and ends with it.",
    body: api.ticketBody,
    ok: [{ status: 201, description: "The ticket.", schema: api.ticketResponse }],
    errors: [400, 413, 503],
  },
  {
    method: "post",
    path: "/auth/session",
    summary: "Trade a ticket for a dashboard session (token auth)",
    description:
      "Only with `--auth tokens`; needs no token (the ticket is the credential, used up here). The session (`cairn_session_…`) is sent as `Authorization: Bearer …` and acts as the ticket's token for 12 h, " +
      "until that token is revoked or expires, or the server restarts.",
    body: api.sessionBody,
    ok: [{ status: 201, description: "The session.", schema: api.sessionResponse }],
    errors: [400, 401, 413, 503],
  },
  {
    method: "get",
    path: "/audit",
    summary: "The audit log, newest first (admin)",
    query: api.auditQuery,
    ok: [{ status: 200, description: "A page of entries; pass nextBefore as beforeId for the next.", schema: api.auditPageSchema }],
    errors: [400, 401, 403, 503],
  },
  {
    method: "post",
    path: "/webhooks/:name",
    summary: "Deliver an event from an external system (HMAC-signed)",
    description:
      "Sign the raw body: `X-Cairn-Signature: sha256=<hex HMAC-SHA256 of the body with the webhook's secret>`. The webhook's configuration maps the body to a run, type and event id; a repeated event id is delivered once.",
    params: z.object({ name: z.string() }),
    ok: [
      { status: 202, description: "Delivered.", schema: api.sendEventResponse },
      { status: 200, description: "This event id was already delivered; nothing changed.", schema: api.sendEventResponse },
    ],
    errors: [400, 401, 404, 409, 413, 503],
  },
  {
    method: "get",
    path: "/workers",
    summary: "Live workers",
    query: api.workersQuery,
    ok: [{ status: 200, description: "Workers that heartbeated recently.", schema: api.workerListSchema }],
    errors: [400, 503],
  },
  {
    method: "get",
    path: "/schedules",
    summary: "Schedules",
    description: "Every schedule, by name: definition, status, next fire time, last tick and run, counts. See docs/operations/schedules.md.",
    ok: [{ status: 200, description: "The schedules.", schema: api.scheduleListSchema }],
    errors: [401, 403, 503],
  },
  {
    method: "get",
    path: "/versions",
    summary: "Runs per workflow version and status",
    description: "Which versions still have live runs, and which are drained. See docs/operations/deploys.md.",
    ok: [{ status: 200, description: "One entry per workflow version, by workflow then version.", schema: api.versionListSchema }],
    errors: [401, 403, 503],
  },
  {
    method: "post",
    path: "/schedules/:name/pause",
    summary: "Pause a schedule (admin)",
    description:
      "Stops firing it until resumed; ticks meanwhile are not fired later (`cairn schedules pause`). Audited as schedule.pause; `changed: false` (not audited) when it was already paused. Needs the admin scope under token auth.",
    params: operator.scheduleNameParam,
    body: operator.scheduleActionBody,
    ok: [{ status: 200, description: "The schedule after the change.", schema: operator.scheduleActionResponse }],
    errors: [400, 401, 403, 404, 413, 503],
  },
  {
    method: "post",
    path: "/schedules/:name/resume",
    summary: "Resume a paused schedule (admin)",
    description:
      "Fires it again from its next tick after now (`cairn schedules resume`). Audited as schedule.resume; `changed: false` (not audited) when it was not paused. Needs the admin scope under token auth.",
    params: operator.scheduleNameParam,
    body: operator.scheduleActionBody,
    ok: [{ status: 200, description: "The schedule after the change.", schema: operator.scheduleActionResponse }],
    errors: [400, 401, 403, 404, 413, 503],
  },
  {
    method: "post",
    path: "/versions/retire",
    summary: "Retire a workflow version (admin)",
    description:
      "No worker claims its runs any more; they stay where they are (`cairn retire`, formerly drain). Audited as version.drain; `changed: false` (not audited) when it was already retired. A version with no runs is retired anyway (`known: false`). Needs the admin scope under token auth.",
    body: operator.versionActionBody,
    ok: [{ status: 200, description: "The version's state.", schema: operator.versionActionResponse }],
    errors: [400, 401, 403, 413, 503],
  },
  {
    method: "post",
    path: "/versions/reinstate",
    summary: "Reinstate a retired workflow version (admin)",
    description:
      "Workers that run it claim its runs again (`cairn reinstate`, formerly undrain). Audited as version.undrain; `changed: false` (not audited) when it was not retired. Needs the admin scope under token auth.",
    body: operator.versionActionBody,
    ok: [{ status: 200, description: "The version's state.", schema: operator.versionActionResponse }],
    errors: [400, 401, 403, 413, 503],
  },
  {
    method: "get",
    path: "/queues",
    summary: "Flow-control queues",
    description:
      "Every queue with unfinished runs or declared on the server's engine: its limits (null when the server's engine does not declare it) and how many runs are running, waiting for a slot and suspended, in total and per concurrency key. Not for namespaced tokens (403).",
    ok: [{ status: 200, description: "The queues.", schema: api.queueListSchema }],
    errors: [401, 403, 503],
  },
  {
    method: "get",
    path: "/outbox",
    summary: "Outbox messages (admin)",
    description:
      "Messages written by `ctx.emit`, in emit order. `status` is a comma-separated list of pending, delivered, dead, or `all` (default pending: not yet delivered). Needs the admin scope under token auth.",
    query: outboxApi.listOutboxQuerySchema,
    ok: [{ status: 200, description: "The messages.", schema: outboxApi.outboxListSchema }],
    errors: [400, 401, 403, 503],
  },
  {
    method: "post",
    path: "/outbox/:id/retry",
    summary: "Re-queue a dead outbox message (admin)",
    description: "Attempts start again; audited. `applied` is false when the message was not dead. Needs the admin scope under token auth.",
    params: outboxMessageParam,
    ok: [{ status: 200, description: "The message after the retry.", schema: z.object({ message: outboxApi.apiOutboxMessageSchema, applied: z.boolean() }) }],
    errors: [401, 403, 404, 503],
  },
  {
    method: "get",
    path: "/alerts",
    summary: "Recent alerts",
    description:
      "Alerts fired by the alert rules, newest first, each with its `cairn.alert` outbox message's delivery status. Not for namespaced tokens (403): alerts name runs of every namespace. See docs/operations/alerts.md.",
    query: alertApi.alertListQuery,
    ok: [{ status: 200, description: "The alerts.", schema: alertApi.alertListSchema }],
    errors: [400, 401, 403, 503],
  },
  {
    method: "get",
    path: "/alerts/rules",
    summary: "The alert rules (admin)",
    description: "The rule set every server on this store evaluates, with who set it and when (null when never set).",
    ok: [{ status: 200, description: "The rules, durations in ms and defaults filled in.", schema: alertApi.alertRulesResponse }],
    errors: [401, 403, 503],
  },
  {
    method: "post",
    path: "/alerts/rules",
    summary: "Replace the alert rules (admin)",
    description:
      "Replaces the whole rule set (`{ rules: [] }` removes every rule). Validated as a rules file is; audited as `alerts.rules.set`. Kinds: spendPerRun, spendPerWorkflow, spendPerDay, failureRate, stuckRuns, humanWaiting.",
    body: alertApi.alertRuleSetSchema,
    ok: [{ status: 200, description: "The rules now in force.", schema: alertApi.alertRulesResponse }],
    errors: [400, 401, 403, 413, 503],
  },
  {
    method: "get",
    path: "/health",
    summary: "Liveness, including the store",
    ok: [{ status: 200, description: "The server and its store answer.", schema: api.healthSchema }],
    errors: [503],
  },
  {
    method: "get",
    path: "/metrics",
    summary: "Prometheus metrics",
    description:
      "Text exposition format 0.0.4. Gauges from the store at each scrape: cairn_runs{workflow,status}, cairn_workers, cairn_human_oldest_pending_seconds. Counters and histograms of this server's process since it started: cairn_steps_total{workflow,outcome}, cairn_step_retries_total, cairn_step_duration_seconds, cairn_human_wait_seconds{workflow}, cairn_budget_spend_usd_total{workflow}, cairn_lease_losses_total, cairn_worker_seconds_total{workflow}, cairn_journal_entries_total{workflow}, cairn_journal_bytes_total{workflow}, cairn_tool_calls_total{workflow,tool,outcome}. Not for namespaced tokens (403): the series name every namespace's workflows and count their runs. `cairn worker --metrics-port` serves the same text for a worker process.",
    ok: [{ status: 200, description: "The metrics.", contentType: "text/plain; version=0.0.4" }],
    errors: [401, 403, 503],
  },
  {
    method: "get",
    path: "/openapi.json",
    summary: "This description",
    ok: [{ status: 200, description: "OpenAPI 3.1.", schema: z.object({ openapi: z.string() }).loose() }],
    errors: [],
  },
];

/** `/runs/:id` → `/runs/{id}` */
export function openApiPath(path: string): string {
  return path.replace(/:(\w+)/g, "{$1}");
}

function jsonSchema(schema: z.ZodType, io: "input" | "output"): Record<string, unknown> {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: "any" }) as Record<string, unknown>;
  return rest;
}

function parameters(schema: z.ZodObject | undefined, where: "path" | "query") {
  if (!schema) return [];
  const object = jsonSchema(schema, "input") as { properties?: Record<string, Record<string, unknown>>; required?: string[] };
  return Object.entries(object.properties ?? {}).map(([name, property]) => {
    const { description, ...rest } = property;
    return { name, in: where, required: where === "path" || (object.required ?? []).includes(name), schema: rest, ...(description ? { description } : {}) };
  });
}

function requestBody(schema: z.ZodType) {
  const body = jsonSchema(schema, "input");
  const required = Array.isArray(body.required) && body.required.length > 0;
  return { required, content: { "application/json": { schema: body } } };
}

/** The OpenAPI 3.1 description of the API, generated from the zod schemas the server validates with. */
export function openApiDocument(): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  const errorSchema = jsonSchema(api.errorResponseSchema, "output");
  for (const route of ROUTES) {
    const responses: Record<string, unknown> = {};
    for (const ok of route.ok) {
      responses[String(ok.status)] = {
        description: ok.description,
        content: { [ok.contentType ?? "application/json"]: ok.schema ? { schema: jsonSchema(ok.schema, "output") } : {} },
      };
    }
    for (const status of guardStatuses(route)) {
      responses[String(status)] = { description: ERROR_TEXT[status], content: { "application/json": { schema: errorSchema } } };
    }
    const operation: Record<string, unknown> = {
      summary: route.summary,
      ...(route.description ? { description: route.description } : {}),
      operationId: `${route.method} ${route.path}`,
      parameters: [
        ...parameters(route.params, "path"),
        ...parameters(route.query, "query"),
        ...(route.path.endsWith("/stream")
          ? [
              {
                name: "Last-Event-ID",
                in: "header",
                required: false,
                schema: { type: "string", pattern: "^\\d+$" },
                description: "The last seq received; wins over ?after.",
              },
            ]
          : []),
      ],
      ...(route.body ? { requestBody: requestBody(route.body) } : {}),
      responses,
      security: isPublicPath(route.path) ? [] : route.method === "get" ? [{ bearer: [] }, { ticket: [] }] : [{ bearer: [] }],
    };
    (paths[openApiPath(route.path)] ??= {})[route.method] = operation;
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Cairn HTTP API",
      version: "0.1.0",
      description: "Start, inspect, stream and control durable runs. Errors are `{ error: { code, message } }`; codes are documented in docs/errors/<code>.md.",
    },
    paths,
    components: {
      securitySchemes: {
        bearer: {
          type: "http",
          scheme: "bearer",
          description: "With `cairn serve --auth tokens`: an API token (`cairn token create`), or a dashboard session from POST /auth/session.",
        },
        ticket: {
          type: "apiKey",
          in: "query",
          name: "ticket",
          description: "A one-time ticket from POST /auth/tickets, for one GET request within 60 s (EventSource, links). `?token=` is refused.",
        },
      },
    },
  };
}

/**
 * A route's error statuses, with those every request may get from the guards in front of it:
 * 421 for a foreign Host (every route); 401 and 403 under token auth (every route but the public
 * ones); 403 for a cross-origin write and 415 for a body that is not JSON (writes, but webhooks,
 * which check a signature over raw bytes instead).
 */
export function guardStatuses(route: Pick<RouteDoc, "method" | "path" | "errors">): number[] {
  const statuses = new Set(route.errors);
  statuses.add(421);
  if (!isPublicPath(route.path)) {
    statuses.add(401);
    statuses.add(403);
  }
  if (route.method === "post" && !route.path.startsWith("/webhooks/")) {
    statuses.add(403);
    statuses.add(415);
  }
  return [...statuses].sort((a, b) => a - b);
}
