import type { HumanRequest } from "../core/store.js";
import { formatTime, oneLine, preview, table, truncate } from "./format.js";

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
