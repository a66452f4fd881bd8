import { formatMs } from "../core/duration.js";
import type { EntryData } from "../core/journal.js";
import type { JournalEntryView } from "../engine/engine.js";
import { formatError, formatTime, formatWaiting, preview, truncate } from "./format.js";

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
