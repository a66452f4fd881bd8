import { formatMs } from "../core/duration.js";
import type { EntryData, WaitDescriptor } from "../core/journal.js";
import type { SerializedError } from "../core/serialize.js";
import type { HumanRequest } from "../core/store.js";
import type { JournalEntryView, RunInfo } from "../engine/engine.js";

/** A column of {@link table}: header and how to render a row's cell. */
export interface Column<T> {
  header: string;
  cell: (row: T) => string;
}

// eslint-disable-next-line no-control-regex -- matching control characters is the point
const TERMINAL_CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * Text safe to write to a terminal: control characters (C0 but newline and tab, DEL, C1) and
 * bidirectional overrides become visible escapes (`\x1b`, `\u202e`), so a run id, event type or
 * error stored by anyone cannot clear the screen, retitle the window or reorder what is shown.
 * Every CLI printer goes through it (print, note, tables, errors).
 */
export function escapeTerminal(text: string): string {
  return text.replace(TERMINAL_CONTROLS, (char) => {
    const code = char.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`;
  });
}

/** JSON text with the characters JSON.stringify leaves raw (DEL, C1, bidi overrides) written as `\uXXXX`: still the same JSON. */
export function escapeJsonForTerminal(json: string): string {
  return json.replace(/[\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/**
 * What each request is about (its `context`, e.g. a tool call's name, arguments and idempotency key),
 * one line per request that has one, under a table of requests.
 */
export function humanContextLines(requests: readonly HumanRequest[]): string[] {
  const lines: string[] = [];
  for (const request of requests) {
    if (request.context === undefined) continue;
    let context: unknown = request.context;
    try {
      context = JSON.parse(request.context);
    } catch {
      // shown as stored
    }
    const about =
      context && typeof context === "object" && !Array.isArray(context) ? describeContext(context as Record<string, unknown>) : preview(context, 400);
    lines.push(`${request.requestId}  ${about}`);
  }
  return lines.length > 0 ? ["", "What they are about:", ...lines.map((line) => `  ${line}`)] : [];
}

/** `key=value` pairs of a request's context, each value a one-line preview. */
function describeContext(context: Record<string, unknown>): string {
  return Object.entries(context)
    .map(([key, value]) => `${key}=${typeof value === "string" ? truncate(oneLine(value), 120) : preview(value, 200)}`)
    .join("  ");
}

/** Renders rows as an aligned text table with a header line. The last column is not padded. */
export function table<T>(rows: readonly T[], columns: readonly Column<T>[]): string[] {
  const cells = rows.map((row) => columns.map((column) => oneLine(escapeTerminal(column.cell(row)))));
  const widths = columns.map((column, i) => Math.max(column.header.length, ...cells.map((line) => line[i]?.length ?? 0)));
  const render = (line: string[]) =>
    line
      .map((cell, i) => (i === line.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join("  ")
      .trimEnd();
  return [render(columns.map((column) => column.header.toUpperCase())), ...cells.map(render)];
}

/** Collapses whitespace so a value fits on one line. */
export function oneLine(text: string): string {
  return text.replace(/\s+/g, " ");
}

/** Truncates to `max` characters with an ellipsis. */
export function truncate(text: string, max = 60): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** A short one-line preview of any value: JSON, truncated. */
export function preview(value: unknown, max = 60): string {
  if (value === undefined) return "undefined";
  let text: string;
  try {
    text =
      typeof value === "string" ? JSON.stringify(value) : (JSON.stringify(value, (_k, v: unknown) => (typeof v === "bigint" ? `${v}n` : v)) ?? String(value));
  } catch {
    text = String(value);
  }
  return truncate(oneLine(text), max);
}

/** Local time as `YYYY-MM-DD HH:MM:SS`. */
export function formatTime(at: Date | number | null | undefined): string {
  if (at === null || at === undefined) return "-";
  const date = typeof at === "number" ? new Date(at) : at;
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
}

/** `in 10m` / `10m ago` relative to `now`. */
export function relative(at: number, now = Date.now()): string {
  const delta = at - now;
  return delta >= 0 ? `in ${formatMs(delta)}` : `${formatMs(-delta)} ago`;
}

/** `Name: message`, with the error code when it has one. */
export function formatError(error: SerializedError | undefined): string {
  if (!error) return "";
  return `${error.name}${error.code ? ` [${error.code}]` : ""}: ${error.message}`;
}

/** One wait, for people: `event review (times out in 72h)`. */
export function formatWait(wait: WaitDescriptor, now = Date.now()): string {
  switch (wait.kind) {
    case "timer":
      return `timer ${wait.opKey} (wakes ${relative(wait.wakeAt, now)})`;
    case "retry":
      return `retry of ${wait.opKey} (${relative(wait.wakeAt, now)})`;
    case "flow":
      return `flow-control slot for ${wait.opKey} (${wait.ahead} ahead; looks again ${relative(wait.wakeAt, now)})`;
    case "event":
      return `event "${wait.type}"${wait.timeoutAt === null ? "" : ` (times out ${relative(wait.timeoutAt, now)})`}`;
    case "child":
      return `child run ${wait.childRunId}`;
    case "human":
      return `human answer ${wait.requestId}${wait.timeoutAt === null ? "" : ` (times out ${relative(wait.timeoutAt, now)})`}`;
  }
}

/** What a run waits for, on one line; "-" when it waits for nothing. */
export function formatWaiting(waits: readonly WaitDescriptor[], now = Date.now()): string {
  return waits.length === 0 ? "-" : waits.map((wait) => formatWait(wait, now)).join(", ");
}

/** The run's status block shown by `cairn show`. */
export function runBlock(run: RunInfo, now = Date.now()): string[] {
  const lines = [
    `run       ${run.runId}`,
    `workflow  ${run.workflow}@${run.version}`,
    `status    ${run.status}`,
    `created   ${formatTime(run.createdAt)}`,
    `updated   ${formatTime(run.updatedAt)}`,
  ];
  if (run.finishedAt) lines.push(`finished  ${formatTime(run.finishedAt)} (took ${formatMs(run.finishedAt.getTime() - run.createdAt.getTime())})`);
  if (run.parentRunId) lines.push(`parent    ${run.parentRunId}`);
  if (run.tags && Object.keys(run.tags).length > 0)
    lines.push(
      `tags      ${Object.entries(run.tags)
        .map(([k, v]) => `${k}=${v}`)
        .join(" ")}`,
    );
  if (run.continuedFrom) lines.push(`continues ${run.continuedFrom}`);
  if (run.continuedTo) lines.push(`continued as ${run.continuedTo}`);
  lines.push(`input     ${preview(run.input, 100)}`);
  if (run.status === "suspended") {
    lines.push(`waiting   ${formatWaiting(run.waitingFor, now)}`);
    const timed = run.waitingFor.some((wait) => wait.kind === "timer" || wait.kind === "retry");
    if (run.wakeAt && timed) lines.push(`wakes     ${formatTime(run.wakeAt)} (${relative(run.wakeAt.getTime(), now)})`);
  }
  if (run.leaseOwner) lines.push(`held by   ${run.leaseOwner} until ${formatTime(run.leaseExpiresAt)} (epoch ${run.leaseEpoch})`);
  if (run.status === "completed") lines.push(`output    ${preview(run.output, 100)}`);
  if (run.error) lines.push(`error     ${formatError(run.error)}`);
  return lines;
}

/** One journal entry as a timeline line: `seq  +elapsed  kind  opKey  summary`. */
export function timelineLine(entry: JournalEntryView, startedAt: Date): string {
  const elapsed = `+${formatMs(Math.max(0, entry.at.getTime() - startedAt.getTime()))}`;
  const parts = [String(entry.seq).padStart(4), elapsed.padStart(7), entry.kind.padEnd(23), (entry.opKey ?? "").padEnd(14), summarize(entry)];
  return parts.join("  ").trimEnd();
}

/** The whole journal as timeline lines. */
export function timeline(entries: readonly JournalEntryView[]): string[] {
  const first = entries[0];
  return first ? entries.map((entry) => timelineLine(entry, first.at)) : [];
}

/** A short summary of an entry's data, by kind. */
export function summarize(entry: JournalEntryView): string {
  const d = entry.data as never;
  switch (entry.kind) {
    case "run.created": {
      const data = d as EntryData["run.created"];
      return `${data.workflow}@${data.version} input ${preview(data.input)}${data.parentRunId ? ` (child of ${data.parentRunId})` : ""}`;
    }
    case "run.claimed": {
      const data = d as EntryData["run.claimed"];
      return `by ${data.workerId} (epoch ${data.epoch}, was ${data.from})`;
    }
    case "run.released":
      return `by ${(d as EntryData["run.released"]).workerId}`;
    case "run.suspended": {
      const data = d as EntryData["run.suspended"];
      return `waiting for ${formatWaiting(data.waitingFor, entry.at.getTime())}`;
    }
    case "run.completed":
      return `→ ${preview((d as EntryData["run.completed"]).output)}`;
    case "run.failed":
      return truncate(formatError((d as EntryData["run.failed"]).error), 100);
    case "run.cancelled":
    case "run.cancelling":
      return (d as EntryData["run.cancelled"]).reason ?? "";
    case "saga.compensating": {
      const data = d as EntryData["saga.compensating"];
      return `${data.reason}: ${truncate(formatError(data.error), 80)}; compensations run newest first`;
    }
    case "run.compensated":
      return `after ${truncate(formatError((d as EntryData["run.compensated"]).error), 90)}`;
    case "run.compensation_failed":
      return truncate(formatError((d as EntryData["run.compensation_failed"]).error), 100);
    case "compensation.started":
    case "compensation.completed":
      return `attempt ${(d as EntryData["compensation.started"]).attempt}`;
    case "compensation.failed":
    case "resource.release_failed": {
      const data = d as EntryData["compensation.failed"];
      return `attempt ${data.attempt}: ${truncate(formatError(data.error), 80)} (${data.final ? "final" : "will retry"})`;
    }
    case "resource.releasing":
    case "resource.released": {
      const data = d as EntryData["resource.released"];
      return `attempt ${data.attempt}, by the ${data.by}`;
    }
    case "run.dead": {
      const data = d as EntryData["run.dead"];
      return `dead after ${data.failures} attempts without progress: ${truncate(formatError(data.error), 100)}`;
    }
    case "run.retried": {
      const steps = (d as EntryData["run.retried"]).failedSteps;
      return steps.length ? `failed steps run again: ${steps.join(", ")}` : "";
    }
    case "run.forked": {
      const data = d as EntryData["run.forked"];
      return `from ${data.fromRunId} at seq ${data.atSeq}${data.patchedSeq === undefined ? "" : `, step result at seq ${data.patchedSeq} patched`}; the entries above are its history`;
    }
    case "run.debounced": {
      const data = d as EntryData["run.debounced"];
      return `starts at ${new Date(data.startAt).toISOString()} with input ${preview(data.input)}`;
    }
    case "step.started": {
      const data = d as EntryData["step.started"];
      return `attempt ${data.attempt}${data.recovered ? " (recovered after a crash)" : ""}`;
    }
    case "step.completed": {
      const data = d as EntryData["step.completed"];
      return `→ ${preview(data.result)}${data.attempt > 1 ? ` (attempt ${data.attempt})` : ""}${data.via ? ` via ${data.via}` : ""}`;
    }
    case "step.failed": {
      const data = d as EntryData["step.failed"];
      const next = data.final ? "final" : data.retryAt ? `retry at ${formatTime(data.retryAt)}` : "will retry";
      return `attempt ${data.attempt}: ${truncate(formatError(data.error), 80)} (${next})`;
    }
    case "step.reconciled": {
      const data = d as EntryData["step.reconciled"];
      return `${data.action} via ${data.via} (attempt ${data.attempt})`;
    }
    case "sleep.started": {
      const wakeAt = (d as EntryData["sleep.started"]).wakeAt;
      return `wakes at ${formatTime(wakeAt)} (after ${formatMs(Math.max(0, wakeAt - entry.at.getTime()))})`;
    }
    case "event.waiting": {
      const data = d as EntryData["event.waiting"];
      return `"${data.type}"${data.timeoutAt === null ? "" : `, times out at ${formatTime(data.timeoutAt)}`}`;
    }
    case "event.received": {
      const data = d as EntryData["event.received"];
      return `"${data.type}" (eventId ${data.eventId}) ${preview(data.payload, 40)}`;
    }
    case "child.started": {
      const data = d as EntryData["child.started"];
      return `${data.childRunId} (${data.workflow}@${data.version})`;
    }
    case "child.completed":
      return `→ ${preview((d as EntryData["child.completed"]).output)}`;
    case "child.failed": {
      const data = d as EntryData["child.failed"];
      return `${data.status}: ${truncate(formatError(data.error), 80)}`;
    }
    case "value.recorded":
      return preview((d as EntryData["value.recorded"]).value);
    case "human.requested": {
      const data = d as EntryData["human.requested"];
      return `${data.requestId}: ${truncate(data.question, 50)}${data.options.length ? ` [${data.options.join("|")}]` : ""}${data.context === undefined ? "" : ` context ${preview(data.context, 300)}`}`;
    }
    case "human.answered": {
      const data = d as EntryData["human.answered"];
      return `${data.requestId}: ${data.answer.option ?? data.answer.action}${data.answer.value === undefined ? "" : ` ${preview(data.answer.value, 40)}`}${data.answer.message ? ` ${preview(data.answer.message, 60)}` : ""}${data.answer.by ? ` by ${data.answer.by}` : ""}`;
    }
    case "human.timedout": {
      const data = d as EntryData["human.timedout"];
      return `${data.requestId}: timed out → ${data.escalation === "choose" ? `chose ${data.option ?? "(none)"}` : data.escalation}`;
    }
    case "human.extended": {
      const data = d as EntryData["human.extended"];
      return `${data.requestId}: extended (${data.extension}) to ${new Date(data.timeoutAt).toISOString()}`;
    }
    case "outbox.emitted": {
      const data = d as EntryData["outbox.emitted"];
      return `${data.topic} ${preview(data.payload, 50)} (message ${data.messageId})`;
    }
    case "loop.snapshot":
      return `iteration ${(d as EntryData["loop.snapshot"]).iteration}`;
    case "loop.completed": {
      const data = d as EntryData["loop.completed"];
      return `${data.iterations} iterations → ${preview(data.result)}`;
    }
    default:
      return "";
  }
}

/** Pending human requests as a table. */
export function humanTable(requests: readonly HumanRequest[]): string[] {
  return table(requests, [
    { header: "request", cell: (r) => r.requestId },
    { header: "run", cell: (r) => r.runId },
    { header: "op", cell: (r) => r.opKey },
    { header: "status", cell: (r) => (r.status === "closed" ? `closed (run ${r.closedReason ?? "finished"})` : r.status) },
    { header: "asked", cell: (r) => formatTime(r.createdAt) },
    { header: "times out", cell: (r) => formatTime(r.timeoutAt) },
    { header: "question", cell: (r) => `${truncate(r.question, 60)}${r.options.length ? ` [${r.options.join("|")}]` : ""}` },
  ]);
}
