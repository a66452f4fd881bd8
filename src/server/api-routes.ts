// The HTTP API's routes as the OpenAPI description tells them: runs, events and human requests.
// The operator's routes are in api-routes-operations.ts; openapi.ts builds the document from both.
import * as live from "../core/live-schemas.js";
import { overviewQuery, overviewResponse } from "./routes/overview.js";
import { costsQuery, costsResponse } from "./routes/costs.js";
import { z } from "zod";
import * as api from "../core/api-schemas.js";
import { exportRunQuery, importRunQuery, runExportSchema } from "../core/run-export.js";

/** One route as the OpenAPI description tells it. Paths use Hono's `:param` form. */
export interface RouteDoc {
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

/** The routes of runs, events and human requests. */
export const RUN_ROUTES: RouteDoc[] = [
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
];
