import { CairnError, deserializeError } from "./cairn-error.js";
import type { SerializedError } from "./serialize.js";

// ── Retryable failures ────────────────────────────────────────────────────────

/** A step attempt ran past its `timeout`. Retryable. */
export class StepTimeoutError extends CairnError {
  constructor(
    readonly opKey: string,
    ms: number,
  ) {
    super("STEP_TIMEOUT", `Step "${opKey}" timed out after ${ms}ms.`);
  }
}

/** Thrown by `waitForEvent` (and other waits) when their timeout elapses. Catchable. */
export class TimeoutError extends CairnError {
  constructor(
    readonly opKey: string,
    what: string,
  ) {
    super("TIMEOUT", `Timed out waiting for ${what} (op "${opKey}").`);
  }
}

/** A step's error as seen by workflow code: rebuilt from the journal, identical live and on replay. */
export class StepFailedError extends CairnError {
  constructor(
    readonly opKey: string,
    readonly failure: SerializedError,
    readonly attempts: number,
  ) {
    super("STEP_FAILED", `Step "${opKey}" failed after ${attempts} attempt(s): ${failure.name}: ${failure.message}`, { cause: deserializeError(failure) });
  }
}

/** Throw this (or set `nonRetryable: true` on an error) from a step to stop retries at once. */
export class NonRetryableError extends Error {
  readonly nonRetryable = true;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "NonRetryableError";
  }
}
