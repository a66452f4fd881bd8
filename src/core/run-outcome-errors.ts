import { CairnError, deserializeError } from "./cairn-error.js";
import type { SerializedError } from "./serialize.js";

// What `run.result()` throws when a run did not complete (terminal failures; re-exported by core/errors.ts).

/** What `run.result()` throws when the run failed; `cause` holds the workflow's error. */
export class RunFailedError extends CairnError {
  constructor(
    readonly runId: string,
    readonly error: SerializedError,
  ) {
    super("RUN_FAILED", `Run "${runId}" failed: ${error.name}: ${error.message}`, { cause: deserializeError(error) });
  }
}

/**
 * What `run.result()` throws when the run ended `compensated`: it failed, was cancelled or called
 * `ctx.compensate()`, and every registered compensation ran. `error` is what made it compensate.
 */
export class RunCompensatedError extends CairnError {
  constructor(
    readonly runId: string,
    readonly error: SerializedError,
  ) {
    super("RUN_COMPENSATED", `Run "${runId}" was compensated after: ${error.name}: ${error.message}`, { cause: deserializeError(error) });
  }
}

/**
 * A compensation failed for good (its retries exhausted): the run ends `compensation_failed` and
 * `run.result()` throws this. `error` names the compensation (`opKey`) and says how many attempts it had.
 */
export class CompensationFailedError extends CairnError {
  constructor(
    readonly runId: string,
    readonly error: SerializedError,
  ) {
    super("COMPENSATION_FAILED", `Run "${runId}" could not be compensated: ${error.message}`, { cause: deserializeError(error) });
  }
}

/** What `run.result()` throws when the run was cancelled. */
export class RunCancelledError extends CairnError {
  constructor(
    readonly runId: string,
    readonly reason: string | undefined,
  ) {
    super("RUN_CANCELLED", `Run "${runId}" was cancelled${reason ? `: ${reason}` : ""}.`);
  }
}
