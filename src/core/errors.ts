import { CairnError, deserializeError } from "./cairn-error.js";
import type { SerializedError } from "./serialize.js";

// Every error Cairn raises, by family (terminal failures, retryable failures, control-flow signals);
// the base class, the run outcome, auth and retryable errors live in their own modules, re-exported here.
export { CairnError, deserializeError, isCairnError, type ErrorCode } from "./cairn-error.js";
export { CompensationFailedError, RunCancelledError, RunCompensatedError, RunFailedError } from "./run-outcome-errors.js";
export { ForbiddenError, TokenExpiredError, TokenNotFoundError, UnauthorizedError } from "./auth-errors.js";
export { NonRetryableError, StepFailedError, StepTimeoutError, TimeoutError } from "./retryable-errors.js";

// ── Terminal failures ─────────────────────────────────────────────────────────

/** Input to a public entry point was invalid. Nothing was written. */
export class ValidationError extends CairnError {
  constructor(message: string) {
    super("INVALID_INPUT", message);
  }
}

/** One problem with an event payload, as its schema reported it (a zod issue, reduced to plain data). */
export interface EventIssue {
  /** Where in the payload, e.g. `["items", 0, "sku"]`; empty for the payload itself. */
  path: (string | number)[];
  message: string;
  /** The schema's issue code, e.g. `invalid_type`. */
  code: string;
}

/**
 * An event's payload does not match the schema declared with `defineEvent`. Nothing was delivered
 * and no run was started; fix the payload (the issues name each field) and send it again.
 */
export class EventInvalidError extends CairnError {
  constructor(
    readonly eventType: string,
    readonly issues: EventIssue[],
  ) {
    const listed = issues
      .slice(0, 5)
      .map((i) => `${i.path.length ? i.path.join(".") : "payload"}: ${i.message}`)
      .join("; ");
    super(
      "EVENT_INVALID",
      `Event "${eventType}" has an invalid payload (${listed}${issues.length > 5 ? "; …" : ""}). Send a payload that matches its defineEvent schema.`,
    );
  }
}

/** No run with this id exists in the store. */
export class RunNotFoundError extends CairnError {
  constructor(readonly runId: string) {
    super("RUN_NOT_FOUND", `Run "${runId}" does not exist. Check the id with \`cairn runs\`.`);
  }
}

/** `start` was called with a runId that exists with a different workflow or input. */
export class RunConflictError extends CairnError {
  constructor(
    readonly runId: string,
    detail: string,
    hint = "Use a new runId, or start with exactly the same workflow and input to get the existing run.",
  ) {
    super("RUN_CONFLICT", `Run "${runId}" already exists ${detail}. ${hint}`);
  }
}

/** What to do about a {@link RunConflictError} raised by an import. */
export const IMPORT_CONFLICT_HINT = "Import it under another id with --as <newRunId> (engine.importRun(data, { as })).";

/** The run has already finished; the operation needs a live run. */
export class RunFinishedError extends CairnError {
  constructor(
    readonly runId: string,
    readonly status: string,
    action: string,
  ) {
    super("RUN_FINISHED", `Cannot ${action}: run "${runId}" is already ${status}.`);
  }
}

/**
 * What `engine.request` throws when the run's `ctx.handle` handler threw: the request was handled (its
 * reply, this error, is journaled) and asking again with the same request id gets the same error.
 */
export class RequestFailedError extends CairnError {
  constructor(
    readonly runId: string,
    readonly requestId: string,
    readonly error: SerializedError,
  ) {
    super("REQUEST_FAILED", `The handler of run "${runId}" failed request "${requestId}": ${error.name}: ${error.message}`, { cause: deserializeError(error) });
  }
}

/** A run exists but has published no value under this name (`GET /runs/:id/values/:name`). */
export class ValueNotFoundError extends CairnError {
  constructor(
    readonly runId: string,
    readonly valueName: string,
  ) {
    super("VALUE_NOT_FOUND", `Run "${runId}" has published no value named "${valueName}" (yet): it publishes with ctx.publish("${valueName}", value).`);
  }
}

/** `retry` was called on a run that has not failed. */
export class RunNotFailedError extends CairnError {
  constructor(
    readonly runId: string,
    readonly status: string,
  ) {
    super(
      "RUN_NOT_FAILED",
      `Cannot retry run "${runId}": it is ${status}, and only failed or dead runs can be retried (and compensation_failed ones, whose unwinding then resumes).`,
    );
  }
}

/** An export was asked of a live run without `force`: its journal is still growing. */
export class RunNotFinishedError extends CairnError {
  constructor(
    readonly runId: string,
    readonly status: string,
  ) {
    super(
      "RUN_NOT_FINISHED",
      `Cannot export run "${runId}": it is ${status}, and only finished runs are exported. Wait for it to finish, or pass force (\`cairn export --force\`) to export it as it is now.`,
    );
  }
}

/**
 * A run's recovery kept failing: its last `failures` attempts ended (worker crash, lease expiry,
 * engine error) without journaling any progress, so it was moved to the `dead` status instead of
 * being claimed again. `cairn retry` revives it.
 */
export class RecoveryFailedError extends CairnError {
  constructor(
    readonly runId: string,
    readonly failures: number,
    readonly lastFailure: string,
  ) {
    super(
      "RECOVERY_FAILED",
      `Run "${runId}" is dead: ${failures} attempts in a row ended without progress (last: ${lastFailure}). ` +
        "Fix the cause (a step that crashes its worker, a bad deploy), then `cairn retry` the run.",
    );
  }
}

/** A workflow was named that this engine does not have registered. */
export class WorkflowNotRegisteredError extends CairnError {
  constructor(
    readonly workflow: string,
    known: string[],
  ) {
    super(
      "WORKFLOW_NOT_REGISTERED",
      `Workflow "${workflow}" is not registered with this engine. Registered: ${known.length ? known.join(", ") : "(none)"}. Register it: createEngine({ workflows }) in code, or --workflows <module> on the cairn command line (worker, serve, dev, start, replay).`,
    );
  }
}

/** The workflow code no longer matches the run's journal. The run fails rather than diverging. */
export class NonDeterminismError extends CairnError {
  constructor(
    readonly opKey: string,
    readonly journaled: string,
    readonly issued: string,
  ) {
    super(
      "NON_DETERMINISM",
      `Non-determinism at op "${opKey}": the journal has ${journaled}, but the code now ${issued}. ` +
        "Workflow code must issue the same ops in the same order on replay; deploy changed code under a new workflow version.",
    );
  }
}

/** A step's result (or another payload) exceeded the configured size limit. */
export class PayloadTooLargeError extends CairnError {
  readonly nonRetryable = true;
  constructor(what: string, bytes: number, limit: number) {
    super(
      "PAYLOAD_TOO_LARGE",
      `${what} is ${bytes} bytes, over the ${limit}-byte limit. Store large data elsewhere (a file or object store) and return a reference.`,
    );
  }
}

/** The store file or database is not a Cairn store, or is damaged. It was not modified. */
export class StoreInvalidError extends CairnError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("STORE_INVALID", message, options);
  }
}

/** A store URL could not be understood. */
export class StoreUrlError extends CairnError {
  constructor(url: string) {
    super(
      "STORE_URL",
      `Unknown store URL "${url}". Use "sqlite:<path>" (e.g. sqlite:.cairn/cairn.db), "postgres://user@host:5432/db?schema=cairn" or "memory:".`,
    );
  }
}

/** The store was written by a newer Cairn than this one. */
export class SchemaTooNewError extends CairnError {
  constructor(found: number, known: number) {
    super("SCHEMA_TOO_NEW", `The store has schema version ${found}, but this Cairn knows only up to ${known}. Upgrade Cairn; the store was not modified.`);
  }
}

/** A human request id is unknown. */
export class HumanRequestNotFoundError extends CairnError {
  constructor(readonly requestId: string) {
    super("HUMAN_REQUEST_NOT_FOUND", `Human request "${requestId}" does not exist. List them with \`cairn human-requests --all\` (ids are <runId>:<op key>).`);
  }
}

/** A run has no journal entry with this seq (`GET /runs/:id/journal/:seq`). */
export class JournalEntryNotFoundError extends CairnError {
  constructor(
    readonly runId: string,
    readonly seq: number,
  ) {
    super(
      "JOURNAL_ENTRY_NOT_FOUND",
      `Run "${runId}" has no journal entry ${seq}: its entries are numbered from 1 to its \`entries\` count (GET /runs/${runId}).`,
    );
  }
}

/** No outbox message has this id (`cairn outbox retry`, `engine.retryOutboxMessage`). */
export class OutboxMessageNotFoundError extends CairnError {
  constructor(readonly messageId: string) {
    super("OUTBOX_MESSAGE_NOT_FOUND", `Outbox message "${messageId}" does not exist; list messages with \`cairn outbox --all\`.`);
  }
}

/** A human request was already answered. */
export class HumanRequestAnsweredError extends CairnError {
  constructor(readonly requestId: string) {
    super("HUMAN_REQUEST_ANSWERED", `Human request "${requestId}" has already been answered.`);
  }
}

/** A human request was closed unanswered because its run finished (completed, failed, cancelled, …). */
export class HumanRequestClosedError extends CairnError {
  constructor(
    readonly requestId: string,
    /** The status the run finished with. */
    readonly runStatus: string,
  ) {
    super(
      "HUMAN_REQUEST_CLOSED",
      `Human request "${requestId}" is closed: its run finished (${runStatus}) before anyone answered, so no answer can reach it. Retry the run (if it failed) to ask again.`,
    );
  }
}

/** The engine was closed. */
export class EngineClosedError extends CairnError {
  constructor() {
    super("ENGINE_CLOSED", "The engine is closed; create a new one with createEngine().");
  }
}

/** A schedule definition is invalid: a bad cron expression, an unknown time zone, or bad options. Nothing was saved. */
export class InvalidScheduleError extends CairnError {
  constructor(
    readonly schedule: string,
    detail: string,
  ) {
    super("INVALID_SCHEDULE", `Schedule "${schedule}" is invalid: ${detail}. See docs/operations/schedules.md.`);
  }
}

/** No schedule with this name exists in the store. */
export class ScheduleNotFoundError extends CairnError {
  constructor(readonly schedule: string) {
    super("SCHEDULE_NOT_FOUND", `Schedule "${schedule}" does not exist. List schedules with \`cairn schedules\`.`);
  }
}

// ── Control flow (not failures) ───────────────────────────────────────────────

/** The worker lost the lease on a run (another worker took it, or it was cancelled). It abandons the execution. */
export class LeaseLostError extends CairnError {
  constructor(
    readonly runId: string,
    readonly epoch: number,
  ) {
    super("LEASE_LOST", `Lease on run "${runId}" (epoch ${epoch}) is lost; this worker abandons the execution.`);
  }
}
