import { z } from "zod";
import { ValidationError } from "./errors.js";
import type { EntryKind } from "./journal.js";
import { RUN_STATUSES, type RunRecord } from "./run.js";
import { decode, encode } from "./serialize.js";
import type { RunImport } from "./store.js";

/** The `format` field of every run export file. */
export const RUN_EXPORT_FORMAT = "cairn.run-export";
/** The export format version this build writes and reads. */
export const RUN_EXPORT_VERSION = 1;

const int = z.number().int();
const time = int.nonnegative();
const text = z.string();
const nullableText = z.string().nullable();

const runSchema = z
  .object({
    runId: text.min(1),
    workflow: text.min(1),
    version: text.min(1),
    status: z.enum(RUN_STATUSES as [RunRecord["status"], ...RunRecord["status"][]]),
    input: text,
    output: nullableText,
    error: nullableText,
    parentRunId: nullableText,
    parentOpKey: nullableText,
    wakeAt: time.nullable(),
    waitingFor: nullableText,
    leaseOwner: nullableText,
    leaseExpiresAt: time.nullable(),
    leaseEpoch: int.nonnegative(),
    lastSeq: int.min(1),
    wakePending: z.boolean(),
    createdAt: time,
    updatedAt: time,
    finishedAt: time.nullable(),
  })
  .strict();

const entrySchema = z.object({ seq: int.min(1), kind: text.min(1), opKey: nullableText, payload: text, epoch: int.nonnegative(), at: time }).strict();

const inboxSchema = z.object({ type: text.min(1), eventId: text.min(1), payload: text, consumedSeq: int.min(1).nullable(), receivedAt: time }).strict();

const humanSchema = z
  .object({
    requestId: text.min(1),
    opKey: text,
    question: text,
    options: z.array(text),
    status: z.enum(["pending", "answered", "closed"]),
    answer: nullableText,
    timeoutAt: time.nullable(),
    createdAt: time,
    answeredAt: time.nullable(),
    context: text.optional(),
    closedReason: text.optional(),
  })
  .strict();

const compactionSchema = z
  .object({ entries: int.min(1), bytes: int.nonnegative(), coveredSeq: int.min(2), checkedSeq: int.min(2), at: time })
  .strict()
  .describe("What compaction removed from the journal: its seqs are gaps below coveredSeq.");

/**
 * The schema of a run export file (`cairn export`, `engine.exportRun`): the run row, its whole journal
 * (seqs 1…lastSeq without gaps, except the `compaction.entries` entries compaction removed below
 * `compaction.coveredSeq`), its inbox in arrival order and its human requests. Inbox row ids are
 * not part of the format (the importing store numbers rows itself); full-text index rows are rebuilt
 * from the journal's `step.completed` entries.
 */
export const runExportSchema = z
  .object({
    format: z.literal(RUN_EXPORT_FORMAT),
    version: z.literal(RUN_EXPORT_VERSION),
    /** ISO time of the export: the only field that differs between two exports of the same run. */
    exportedAt: z.string().datetime(),
    run: runSchema,
    journal: z.array(entrySchema).min(1),
    inbox: z.array(inboxSchema),
    humanRequests: z.array(humanSchema),
    compaction: compactionSchema.optional(),
  })
  .strict()
  .superRefine((data, issue) => {
    const compacted = data.compaction?.entries ?? 0;
    const coveredSeq = data.compaction?.coveredSeq ?? 0;
    let previous = 0;
    data.journal.forEach((entry, i) => {
      // Gaps only where compaction removed entries: below the checkpoint that covers them.
      if (entry.seq !== previous + 1 && (entry.seq <= previous || entry.seq > coveredSeq)) {
        const message =
          compacted > 0
            ? `expected seq ${previous + 1} (seqs ascend, with gaps only below compaction.coveredSeq ${coveredSeq})`
            : `expected seq ${previous + 1} (seqs run 1, 2, … without gaps)`;
        issue.addIssue({ code: "custom", path: ["journal", i, "seq"], message });
      }
      previous = entry.seq;
    });
    if (data.journal.length + compacted !== data.run.lastSeq) {
      const counted = compacted > 0 ? `${data.journal.length} entries and ${compacted} compacted` : `${data.journal.length} entries`;
      issue.addIssue({ code: "custom", path: ["run", "lastSeq"], message: `is ${data.run.lastSeq} but the journal has ${counted}` });
    }
    if (data.journal[0] && data.journal[0].kind !== "run.created")
      issue.addIssue({ code: "custom", path: ["journal", 0, "kind"], message: "seq 1 must be run.created" });
    const events = new Set<string>();
    data.inbox.forEach((event, i) => {
      if (events.has(event.eventId)) issue.addIssue({ code: "custom", path: ["inbox", i, "eventId"], message: `duplicate eventId "${event.eventId}"` });
      events.add(event.eventId);
    });
    const requests = new Set<string>();
    data.humanRequests.forEach((request, i) => {
      if (requests.has(request.requestId)) issue.addIssue({ code: "custom", path: ["humanRequests", i, "requestId"], message: `duplicate requestId` });
      requests.add(request.requestId);
    });
    for (const [path, value] of [[["run", "input"], data.run.input] as const, ...data.journal.map((e, i) => [["journal", i, "payload"], e.payload] as const)]) {
      try {
        decode(value);
      } catch {
        issue.addIssue({ code: "custom", path: [...path], message: "is not an encoded payload" });
      }
    }
  });

/** A run export file, as written by `engine.exportRun` and read by `engine.importRun`. */
export type RunExport = z.infer<typeof runExportSchema>;

/**
 * Checks an export file's parsed JSON against {@link runExportSchema}.
 * @throws ValidationError naming every problem (path and message); nothing is written.
 */
export function parseRunExport(json: unknown): RunExport {
  const parsed = runExportSchema.safeParse(json);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.slice(0, 10).map((i) => `${i.path.join(".") || "(file)"}: ${i.message}`);
  throw new ValidationError(
    `Not a valid Cairn run export (format "${RUN_EXPORT_FORMAT}", version ${RUN_EXPORT_VERSION}): ${problems.join("; ")}. Export the run again with \`cairn export\`.`,
  );
}

/** The export file of a run and its rows (see {@link runExportSchema}). */
export function toRunExport(data: RunImport, exportedAt: number): RunExport {
  return {
    format: RUN_EXPORT_FORMAT,
    version: RUN_EXPORT_VERSION,
    exportedAt: new Date(exportedAt).toISOString(),
    run: { ...data.run },
    journal: data.journal.map(({ runId: _, ...entry }) => entry),
    inbox: data.inbox.map(({ runId: _, ...event }) => event),
    humanRequests: data.humanRequests.map(({ runId: _, ...request }) => request),
    ...(data.compaction ? { compaction: { ...data.compaction } } : {}),
  };
}

/**
 * The rows to import for an export file, under `asRunId` when given. Renaming rewrites every place the
 * run id is part of another id: human request ids (`<runId>:<opKey>…`) in the requests, in journal
 * payloads that name them, and in the inbox events that carry their answers.
 */
export function fromRunExport(data: RunExport, asRunId?: string): RunImport {
  const from = data.run.runId;
  const runId = asRunId ?? from;
  const rename = (id: string): string => (runId !== from && id.startsWith(`${from}:`) ? `${runId}${id.slice(from.length)}` : id);
  const payload = (kind: string, text: string): string => {
    if (runId === from || !kind.startsWith("human.")) return text;
    const value = decode<Record<string, unknown>>(text);
    return typeof value?.requestId === "string" ? encode({ ...value, requestId: rename(value.requestId) }) : text;
  };
  return {
    run: { ...data.run, runId },
    journal: data.journal.map((entry) => ({ ...entry, kind: entry.kind as EntryKind, runId, payload: payload(entry.kind, entry.payload) })),
    inbox: data.inbox.map((event) => ({
      ...event,
      runId,
      eventId: event.type.startsWith("human:") ? rename(event.eventId) : event.eventId,
      type: event.type.startsWith("human:") ? `human:${rename(event.type.slice(6))}` : event.type,
    })),
    humanRequests: data.humanRequests.map((request) => ({ ...request, runId, requestId: rename(request.requestId) })),
    ...(data.compaction ? { compaction: { ...data.compaction } } : {}),
  };
}

/** Query of `GET /runs/:id/export`. */
export const exportRunQuery = z
  .object({ force: z.enum(["true", "false"]).optional().describe("true: export a live run as it is now (default: only finished runs).") })
  .strict();

/** Query of `POST /runs/import`. */
export const importRunQuery = z
  .object({ as: z.string().min(1).max(256).optional().describe("Import under this run id instead of the exported one.") })
  .strict();
