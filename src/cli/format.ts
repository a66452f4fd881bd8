import { formatMs } from "../core/duration.js";
import type { WaitDescriptor } from "../core/journal.js";
import type { SerializedError } from "../core/serialize.js";
import type { RunInfo } from "../engine/engine.js";
import { escapeTerminal } from "./terminal-escape.js";

/** A column of {@link table}: header and how to render a row's cell. */
export interface Column<T> {
  header: string;
  cell: (row: T) => string;
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
