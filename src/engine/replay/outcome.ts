import { RunCancelledError, RunFailedError, StepFailedError, TimeoutError } from "../../core/errors.js";
import { deserializeError } from "../../core/cairn-error.js";
import type { EntryData } from "../../core/journal.js";
import { replyOutcome } from "../ask-human.js";
import type { DecodedEntry, Outcome } from "../execution-types.js";

/**
 * The value or error an outcome entry delivers to workflow code: the same live, on a worker's resume
 * and in a dry replay. `first` is the op's first entry (an event wait's or a child's intent), which
 * some errors name.
 */
export function outcomeOf(runId: string, key: string, entry: DecodedEntry, first: DecodedEntry | undefined): Outcome {
  switch (entry.kind) {
    case "step.completed":
      return { ok: true, value: (entry.data as EntryData["step.completed"]).result };
    case "step.failed": {
      const data = entry.data as EntryData["step.failed"];
      return { ok: false, error: new StepFailedError(key, data.error, data.attempt) };
    }
    case "sleep.completed":
      return { ok: true, value: undefined };
    case "event.received":
      return { ok: true, value: (entry.data as EntryData["event.received"]).payload };
    case "event.timedout": {
      const waiting = first?.data as EntryData["event.waiting"] | undefined;
      return { ok: false, error: new TimeoutError(key, `event "${waiting?.type ?? key}"`) };
    }
    case "child.completed":
      return { ok: true, value: (entry.data as EntryData["child.completed"]).output };
    case "loop.completed":
      return { ok: true, value: (entry.data as EntryData["loop.completed"]).result };
    case "outbox.emitted":
      return { ok: true, value: { messageId: (entry.data as EntryData["outbox.emitted"]).messageId } };
    case "publish.value":
    case "request.replied":
      return { ok: true, value: undefined };
    case "human.answered":
    case "human.timedout":
      return replyOutcome(runId, key, entry.kind, entry.data);
    case "child.failed": {
      const data = entry.data as EntryData["child.failed"];
      const started = first?.data as EntryData["child.started"] | undefined;
      const childRunId = started?.childRunId ?? key;
      const reason = (data.error.data as { reason?: string } | undefined)?.reason;
      // "conflict": the id named a run that is not this op's child (RunConflictError, see ops/child.ts).
      if (data.status === "conflict") return { ok: false, error: deserializeError(data.error) };
      return { ok: false, error: data.status === "cancelled" ? new RunCancelledError(childRunId, reason) : new RunFailedError(childRunId, data.error) };
    }
    default:
      throw new Error(`not an outcome: ${entry.kind}`);
  }
}
