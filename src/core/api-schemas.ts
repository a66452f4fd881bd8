import { liveStartFields } from "./live-schemas.js";
import { instant, statusList, timestamp, wholeNumber } from "./wire-formats.js";
import { flowOptionsSchema } from "./flow-control.js";
import { z } from "zod";
import {
  cancelReasonSchema,
  eventIdSchema,
  eventTypeSchema,
  humanAnswerSchema,
  printable,
  requestIdSchema,
  runIdRefSchema,
  runIdSchema,
  runStatusSchema,
} from "./schemas.js";

/**
 * The HTTP API's wire format: request bodies, query strings and responses, as zod schemas.
 * `cairn/server` validates with them and generates its OpenAPI description from them;
 * `cairn/client` uses their types only (no zod at run time in the client).
 * Timestamps are ISO 8601 strings on the wire; payloads (inputs, outputs, entry data) are JSON.
 */

export {
  apiAuditEntrySchema,
  apiTokenSchema,
  auditPageSchema,
  auditQuery,
  createTokenBody,
  createTokenResponse,
  namespaceSchema,
  sessionBody,
  sessionResponse,
  ticketBody,
  ticketResponse,
  tokenIdParam,
  tokenListSchema,
  tokenScopeSchema,
} from "./security-schemas.js";
export type { ApiAuditEntry, ApiToken, CreateTokenBody } from "./security-schemas.js";
export { runCostsQuery, runCostsSchema, type ApiRunCosts } from "./cost-schemas.js";

// ── requests ───────────────────────────────────────────────────────────────

/** `POST /runs` */
export const startRunBody = z
  .object({
    workflow: printable(z.string().min(1, "must not be empty").max(256)).describe("A workflow name registered with the server's engine."),
    version: printable(z.string().min(1, "must not be empty").max(128))
      .optional()
      .describe("A version of the workflow registered with the server's engine (name@version). Default: its current (last registered) version."),
    input: z.unknown().optional().describe("The run's input (JSON). Default null."),
    runId: runIdSchema.optional().describe("Caller-chosen id; starting again with the same id and input returns the existing run."),
    queue: flowOptionsSchema.shape.queue.describe("Flow control: a queue declared on the server's engine. Default: the workflow's queue."),
    concurrencyKey: flowOptionsSchema.shape.concurrencyKey.describe("Flow control: runs with the same key share the queue's perKeyConcurrency."),
    priority: flowOptionsSchema.shape.priority.describe("Flow control: higher is claimed first within the queue; default 0."),
    ...liveStartFields,
  })
  .strict();

/** `POST /runs/:id/events` */
export const sendEventBody = z
  .object({
    type: eventTypeSchema,
    payload: z.unknown().optional(),
    eventId: eventIdSchema.optional().describe("Idempotency key: a second event with the same id is a no-op. Default: generated."),
    secret: z
      .boolean()
      .optional()
      .describe('The payload is a secret: the run gets it, every view of the run (journal, stream, run output) shows "[redacted]" instead.'),
  })
  .strict();

/** `POST /runs/:id/cancel` */
export const cancelBody = z.object({ reason: cancelReasonSchema.optional() }).strict();

/** `POST /runs/:id/retry` */
export const retryBody = z.object({}).strict();

/** A journal seq: a whole number from 1. */
const seqSchema = z.number().int("must be a whole number").min(1, "must be 1 or more").max(Number.MAX_SAFE_INTEGER);

/**
 * `POST /runs/:id/fork`, and the options of `engine.fork`: a new run whose journal is the original's up to
 * `atSeq` (with one step result optionally patched), continuing from there under current code.
 */
export const forkBody = z
  .object({
    atSeq: seqSchema.describe("The last entry of the original journal to keep; the fork replays up to it and runs the rest live."),
    patch: z
      .object({
        seq: seqSchema.describe("Seq of a step.completed entry at or before atSeq."),
        result: z.unknown().describe("The result that step returns in the fork (JSON). Omitted means null."),
      })
      .strict()
      .optional()
      .describe("Replace one step's journaled result."),
    runId: runIdSchema.optional().describe("The new run's id. Default: generated. Forking again with the same id, atSeq and patch returns the same run."),
  })
  .strict();

/** `POST /human-requests/:id/answer` */
export const answerBody = humanAnswerSchema;

/** Path parameter of the run routes. */
export const runIdParam = z.object({ id: runIdRefSchema });

/** Path parameters of `GET /runs/:id/journal/:seq`. */
export const journalEntryParam = z.object({ id: runIdSchema, seq: wholeNumber(1, Number.MAX_SAFE_INTEGER) });

/** Path parameter of the human-request routes. */
export const requestIdParam = z.object({ id: requestIdSchema });

/** `GET /runs` */
export const listRunsQuery = z
  .object({
    status: statusList.optional().describe("One status or several separated by commas."),
    workflow: z.string().min(1).max(256).optional(),
    q: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .describe("Only runs whose id, workflow name or error message contains this text, ignoring case (a plain substring: % and _ are not wildcards)."),
    createdAfter: instant.optional(),
    createdBefore: instant.optional(),
    topLevel: z.enum(["true", "false"]).optional().describe("true: only top-level runs (child runs left out)."),
    tag: z.string().min(3).max(400).optional().describe("Only runs with this tag, written key:value (repeat the parameter for several)."),
    cursor: z.string().min(1).max(1024).optional().describe("`nextCursor` of the previous page."),
    limit: wholeNumber(1, 1000).optional().describe("Page size, default 50."),
  })
  .strict();

/** `GET /run-count`: the filters of `GET /runs`, without paging. */
export const runCountQuery = listRunsQuery.omit({ cursor: true, limit: true });

/** The filters of a bulk action: those of `GET /runs`, as JSON (instants as ISO strings or epoch ms). */
const bulkFilter = z
  .object({
    status: z.array(runStatusSchema).min(1).optional(),
    workflow: z.string().min(1).max(256).optional(),
    q: z.string().min(1).max(200).optional(),
    createdAfter: z.union([z.number().int().min(0), z.string().datetime({ offset: true })]).optional(),
    createdBefore: z.union([z.number().int().min(0), z.string().datetime({ offset: true })]).optional(),
    topLevel: z.boolean().optional(),
    tags: z.record(z.string().min(1).max(128), z.string().max(256)).optional(),
  })
  .strict();

/** Runs a bulk action may touch in one call. */
export const BULK_MAX_RUNS = 1000;

/**
 * `POST /bulk/cancel` and `POST /bulk/retry`: either `runIds` (selected runs) or `filter` (every run
 * a listing with those filters holds that the action applies to), at most {@link BULK_MAX_RUNS}.
 */
export const bulkBody = z
  .object({
    runIds: z.array(runIdRefSchema).min(1, "give at least one run id").max(BULK_MAX_RUNS).optional(),
    filter: bulkFilter.optional(),
    reason: cancelReasonSchema.optional().describe("Cancel only: why, kept in each run's journal and the audit log."),
  })
  .strict()
  .refine((body) => (body.runIds === undefined) !== (body.filter === undefined), { message: "give either runIds or filter, not both and not neither" });

/** `GET /runs/:id/journal` */
export const journalQuery = z
  .object({
    after: wholeNumber(0, Number.MAX_SAFE_INTEGER).optional().describe("Only entries with a greater seq."),
    limit: wholeNumber(1, 1000).optional().describe("At most this many entries, default 1000."),
  })
  .strict();

/** `GET /runs/:id/stream` */
export const streamQuery = z
  .object({
    after: wholeNumber(0, Number.MAX_SAFE_INTEGER).optional().describe("Start after this seq. The Last-Event-ID header, when sent, wins."),
    preview: z
      .enum(["true", "false"])
      .optional()
      .describe(
        "true: entries over 8 KiB are sent with `data: null` and `elided` (their size), as on journal pages; fetch one whole from /runs/:id/journal/:seq.",
      ),
  })
  .strict();

/** `GET /stuck-runs` */
export const stuckRunsQuery = z
  .object({
    graceMs: wholeNumber(0, 365 * 24 * 3_600_000)
      .optional()
      .describe("How long a runnable run may wait unclaimed; default 60000."),
    limit: wholeNumber(1, 1000).optional(),
  })
  .strict();

/** Filters of the human-request list, shared by the HTTP query and `engine.listHumanRequests`. */
const humanRequestFilters = {
  status: z
    .enum(["pending", "answered", "closed"])
    .optional()
    .describe("`closed`: the run finished before anyone answered (closedReason is its final status)."),
  runId: runIdSchema.optional(),
  runIdPrefix: z.string().min(1).max(256).optional().describe("Only requests of runs whose id starts with this text."),
  order: z
    .enum(["asc", "desc"])
    .optional()
    .describe("By creation time: `asc` oldest first, `desc` newest first. Default: oldest first for pending requests, newest first otherwise."),
  cursor: z.string().min(1).max(2048).optional().describe("`nextCursor` of the previous page (same filters and order)."),
};

/** `GET /human-requests` */
export const humanRequestsQuery = z
  .object({ ...humanRequestFilters, limit: wholeNumber(1, 1000).optional().describe("Page size, default and at most 1000.") })
  .strict();

/** `engine.listHumanRequests(options)` */
export const listHumanRequestsOptionsSchema = z.object({ ...humanRequestFilters, limit: z.number().int().min(1).max(1000).optional() }).strict();

/** `GET /workers` */
export const workersQuery = z
  .object({
    staleAfterMs: wholeNumber(1, 365 * 24 * 3_600_000)
      .optional()
      .describe("Workers whose last heartbeat is older are left out; default 60000."),
  })
  .strict();

// ── responses ──────────────────────────────────────────────────────────────

export const serializedErrorSchema = z
  .object({ name: z.string(), message: z.string(), code: z.string().optional(), stack: z.string().optional() })
  .loose()
  .describe("An error as journaled: name, message, code, stack, cause, data.");

export const waitSchema = z
  .object({ kind: z.enum(["timer", "retry", "flow", "event", "child", "human"]), opKey: z.string() })
  .loose()
  .describe("What a suspended run waits for: a timer, a retry back-off, an event, a child run or a person.");

/** Set on a listed row whose stored payload cannot be decoded. */
const UNREADABLE = z
  .string()
  .describe("Present only when a stored payload of this row cannot be decoded: why. Its payloads are left out (docs/errors/PAYLOAD_UNREADABLE.md).");

/** A run. */
export const apiRunSchema = z.object({
  runId: z.string(),
  workflow: z.string(),
  version: z.string(),
  status: runStatusSchema,
  input: z.unknown(),
  output: z.unknown().optional(),
  error: serializedErrorSchema.optional(),
  parentRunId: z.string().nullable(),
  wakeAt: timestamp.nullable(),
  waitingFor: z.array(waitSchema),
  leaseOwner: z.string().nullable(),
  leaseExpiresAt: timestamp.nullable(),
  leaseEpoch: z.number().int(),
  entries: z.number().int().describe("Number of journal entries (the seq of the last one)."),
  createdAt: timestamp,
  updatedAt: timestamp,
  finishedAt: timestamp.nullable(),
  forkedFrom: z
    .object({ runId: z.string(), atSeq: z.number().int(), version: z.string().optional() })
    .optional()
    .describe("Set on a fork: the run and seq it was forked from, and the version that run had when it differs from this one's."),
  elided: z
    .object({ input: z.number().int().optional(), output: z.number().int().optional() })
    .optional()
    .describe("In a listing: the input and/or output were larger than 8 KiB and are left out (null); their sizes in bytes. GET /runs/:id has them whole."),
  unreadable: UNREADABLE.optional(),
  tags: z.record(z.string(), z.string()).optional().describe("The run's tags (GET /runs/:id)."),
  continuedFrom: z.string().optional().describe("The run this one continues (ctx.continueAsNew)."),
  continuedTo: z.string().optional().describe("The run this one continued as."),
  compaction: z
    .object({ entries: z.number().int(), bytes: z.number().int(), coveredSeq: z.number().int(), checkedSeq: z.number().int(), at: z.number().int() })
    .optional()
    .describe("GET /runs/:id, once loop compaction deleted entries: how many (their seqs are gaps below coveredSeq; a fork cuts at coveredSeq or later)."),
});

/** `POST /runs` */
export const startRunResponse = z.object({ created: z.boolean(), run: apiRunSchema });

/** `POST /runs/:id/fork` answer: the new run; `created: false` when the same fork already existed. */
export const forkResponse = z.object({ created: z.boolean(), run: apiRunSchema });

/** `GET /runs`, `GET /stuck-runs` */
export const runPageSchema = z.object({ runs: z.array(apiRunSchema), nextCursor: z.string().optional() });

/** A journal entry. */
export const apiJournalEntrySchema = z.object({
  seq: z.number().int(),
  kind: z.string(),
  opKey: z.string().nullable(),
  data: z.unknown(),
  epoch: z.number().int(),
  at: timestamp,
  elided: z
    .number()
    .int()
    .optional()
    .describe("In a page: the data was larger than 8 KiB and is left out (null); its size in bytes. GET /runs/:id/journal/:seq has it whole."),
  unreadable: UNREADABLE.optional(),
});

/** `GET /runs/:id/journal` */
export const journalPageSchema = z.object({
  entries: z.array(apiJournalEntrySchema),
  nextAfter: z.number().int().optional().describe("Present when the page is full (in rows or in bytes): pass it as `after` for the next page."),
});

/** `POST /runs/:id/events` */
export const sendEventResponse = z.object({ eventId: z.string(), duplicate: z.boolean() });

/** `POST /events`: an event for no run in particular; it starts the workflows whose `on` names its type. */
export const publishEventBody = z
  .object({
    type: eventTypeSchema,
    payload: z.unknown().optional(),
    eventId: eventIdSchema.optional().describe("Idempotency key: publishing the same id again starts nothing new. Default: generated."),
  })
  .strict();

/** What `POST /events` did: the runs the event started (or found) and the runs it cancelled. */
export const publishEventResponse = z.object({
  eventId: z.string(),
  runs: z.array(z.object({ workflow: z.string(), runId: z.string(), created: z.boolean() })),
  cancelled: z.array(z.string()),
});

/** A question for a person. */
export const apiHumanRequestSchema = z.object({
  requestId: z.string(),
  runId: z.string(),
  opKey: z.string(),
  question: z.string(),
  options: z.array(z.string()),
  status: z.enum(["pending", "answered", "closed"]),
  answer: humanAnswerSchema.nullable(),
  /** With status `closed`: the final status of the run, which finished before anyone answered. */
  closedReason: z.string().nullable(),
  timeoutAt: timestamp.nullable(),
  createdAt: timestamp,
  answeredAt: timestamp.nullable(),
  /** What the question was asked with (`ctx.askHuman({ context })`), or null. */
  context: z.unknown().nullable(),
  /** The JSON Schema an answer's `value` must match (`ctx.askHuman({ input })`), or null when the request has none. */
  input: z
    .record(z.string(), z.unknown())
    .nullable()
    .describe("JSON Schema of the answer's `value` (from the request's zod `input` schema); an answer that does not match it is refused with 422."),
  refused: z
    .object({ requestId: z.string(), message: z.string() })
    .nullable()
    .describe(
      "Set when this request asks again because the workflow's input schema refused the answer to `requestId` (checks the JSON Schema cannot express: refine, custom, dates…): why.",
    ),
  requireNote: z
    .union([z.literal(true), z.array(z.string())])
    .nullable()
    .describe(
      "Answers that must come with a note (`message`): true for every answer, or the options that need one; null when none does (`ctx.askHuman({ requireNote })`).",
    ),
  unreadable: UNREADABLE.optional(),
});

export const humanRequestListSchema = z.object({
  requests: z.array(apiHumanRequestSchema),
  nextCursor: z.string().optional().describe("Present when more requests match: pass it as `cursor` for the next page."),
});

export const answerResponse = z.object({
  request: apiHumanRequestSchema,
  /** True when the request had been answered already: the request shows the first answer, which stands. */
  duplicate: z.boolean(),
});

/** A live worker. */
export const apiWorkerSchema = z.object({
  workerId: z.string(),
  host: z.string(),
  pid: z.number().int(),
  workflows: z.array(z.string()),
  runsHeld: z.number().int(),
  startedAt: timestamp,
  heartbeatAt: timestamp,
});

export const workerListSchema = z.object({ workers: z.array(apiWorkerSchema) });

/** Counts of one queue and concurrency key (flow control). */
export const apiQueueStatSchema = z.object({
  queue: z.string(),
  concurrencyKey: z.string().nullable(),
  running: z.number().int(),
  waiting: z.number().int(),
  suspended: z.number().int(),
});

/** `GET /queues`: each queue's limits (as the server's engine declares them, or null), totals and counts per key. */
export const queueListSchema = z.object({
  queues: z.array(
    z.object({
      name: z.string(),
      limits: z
        .object({
          name: z.string(),
          concurrency: z.number().int().nullable(),
          perKeyConcurrency: z.number().int().nullable(),
          rateLimit: z.object({ limit: z.number().int(), perMs: z.number() }).nullable(),
        })
        .nullable(),
      running: z.number().int(),
      waiting: z.number().int(),
      suspended: z.number().int(),
      keys: z.array(apiQueueStatSchema),
    }),
  ),
});

export const healthSchema = z.object({ status: z.literal("ok") });

/** A schedule as `GET /schedules` shows it (see docs/operations/schedules.md). */
export const apiScheduleSchema = z.object({
  name: z.string(),
  workflow: z.string(),
  cron: z.string(),
  timezone: z.string(),
  /** Absent when the schedule has no input. */
  input: z.unknown().optional(),
  overlap: z.enum(["skip", "buffer", "allow"]),
  catchUp: z.enum(["none", "latest", "all"]),
  maxCatchUp: z.number(),
  graceMs: z.number(),
  status: z.enum(["active", "paused"]),
  nextTickAt: timestamp.nullable(),
  lastTickAt: timestamp.nullable(),
  lastRunId: z.string().nullable(),
  lastRunStatus: z.string().nullable(),
  bufferedTickAt: timestamp.nullable(),
  firedCount: z.number(),
  skippedCount: z.number(),
  missedCount: z.number(),
  owner: z.string().nullable(),
});

export const scheduleListSchema = z.object({ schedules: z.array(apiScheduleSchema) });

/** Every error response. `code` is stable and documented in docs/errors/<code>.md. */
export const errorResponseSchema = z.object({ error: z.object({ code: z.string(), message: z.string() }) });

export type StartRunBody = z.input<typeof startRunBody>;
export type ForkBody = z.input<typeof forkBody>;
export type SendEventBody = z.input<typeof sendEventBody>;
export type AnswerBody = z.input<typeof answerBody>;
export type ApiRun = z.output<typeof apiRunSchema>;
export type ApiRunPage = z.output<typeof runPageSchema>;
export type ApiJournalEntry = z.output<typeof apiJournalEntrySchema>;
export type ApiJournalPage = z.output<typeof journalPageSchema>;
export type ApiHumanRequest = z.output<typeof apiHumanRequestSchema>;
export type ApiWorker = z.output<typeof apiWorkerSchema>;
export type ApiErrorBody = z.output<typeof errorResponseSchema>;

/** One workflow version with its runs by status (`GET /versions`, `cairn versions`). */
export const apiVersionSchema = z.object({
  workflow: z.string(),
  version: z.string(),
  counts: z.record(runStatusSchema, z.number().int()).describe("Runs by status; statuses with none are left out."),
  live: z.number().int().describe("Runs not finished (pending, running, suspended)."),
  total: z.number().int(),
  drained: z.boolean().describe("No worker claims its runs (`cairn drain`)."),
  registered: z.boolean().describe("The server's engine has code for it."),
});

export const versionListSchema = z.object({ versions: z.array(apiVersionSchema) });

export type ApiVersion = z.output<typeof apiVersionSchema>;
/** A schedule as `GET /schedules` lists it. */
export type ApiSchedule = z.output<typeof apiScheduleSchema>;
/** A flow-control queue as `GET /queues` lists it. */
export type ApiQueue = z.output<typeof queueListSchema>["queues"][number];

/** What `POST /bulk/cancel` and `POST /bulk/retry` answer: the runs acted on, and those refused with why. */
export const bulkResponse = z.object({
  done: z.array(z.string()),
  failed: z.array(z.object({ runId: z.string(), error: z.string() })),
});
