// The HTTP API's operator routes as the OpenAPI description tells them: tokens, sessions, audit,
// webhooks, workers, schedules, versions, queues, the outbox, alerts, health and metrics.
import * as outboxApi from "../core/outbox.js";
import { z } from "zod";
import * as api from "../core/api-schemas.js";
import * as operator from "../core/console-schemas.js";
import { outboxMessageParam } from "./routes/outbox.js";
import * as alertApi from "../core/alert-schemas.js";

import type { RouteDoc } from "./api-routes.js";

/** The operator's routes. */
export const OPERATION_ROUTES: RouteDoc[] = [
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
