import type { SerializedError } from "./serialize.js";

/**
 * Stable string codes for every error Cairn raises. Each maps to `docs/errors/<code>.md`.
 */
export type ErrorCode =
  | "INVALID_INPUT"
  | "RUN_NOT_FOUND"
  | "RUN_CONFLICT"
  | "RUN_FINISHED"
  | "REQUEST_FAILED"
  | "VALUE_NOT_FOUND"
  | "RUN_NOT_FAILED"
  | "RUN_NOT_FINISHED"
  | "WORKFLOW_NOT_REGISTERED"
  | "NON_DETERMINISM"
  | "LEASE_LOST"
  | "TIMEOUT"
  | "STEP_TIMEOUT"
  | "STEP_FAILED"
  | "PAYLOAD_TOO_LARGE"
  | "PAYLOAD_CORRUPT"
  | "PAYLOAD_KEY_MISSING"
  | "RUN_FAILED"
  | "RUN_CANCELLED"
  | "RUN_COMPENSATED"
  | "COMPENSATION_FAILED"
  | "HUMAN_REQUEST_NOT_FOUND"
  | "JOURNAL_ENTRY_NOT_FOUND"
  | "HUMAN_REQUEST_ANSWERED"
  | "HUMAN_REQUEST_CLOSED"
  | "STORE_INVALID"
  | "STORE_URL"
  | "SCHEMA_TOO_NEW"
  | "ENGINE_CLOSED"
  | "MODEL_SCRIPT_EXHAUSTED"
  | "MODEL_SCRIPT_MISMATCH"
  | "MODEL_PRICE_UNKNOWN"
  | "MODEL_CALL_UNCONFIRMED"
  | "MODEL_SDK_MISSING"
  | "MODEL_INPUT_UNSUPPORTED"
  | "MODEL_REQUEST_REJECTED"
  | "MODEL_PROVIDER_FAILED"
  | "MODEL_OUTPUT_INVALID"
  | "BUDGET_EXCEEDED"
  | "MANIFEST_CHANGED"
  | "ROUTE_NOT_FOUND"
  | "STORE_UNAVAILABLE"
  | "UNAUTHORIZED"
  | "TOKEN_EXPIRED"
  | "FORBIDDEN"
  | "TOKEN_NOT_FOUND"
  | "INVALID_SCHEDULE"
  | "SCHEDULE_NOT_FOUND"
  | "OUTBOX_MESSAGE_NOT_FOUND"
  | "RECOVERY_FAILED"
  | "EVENT_INVALID"
  | "UNSUPPORTED_MEDIA_TYPE"
  | "CROSS_ORIGIN_REFUSED"
  | "HOST_NOT_ALLOWED"
  | "APPROVAL_REFUSED"
  | "CREDENTIAL_UNAVAILABLE"
  | "CREDENTIAL_REVOKED"
  | "INTERNAL_ERROR";

/** Base of every Cairn error: carries a stable {@link ErrorCode}. */
export class CairnError extends Error {
  /** Stable code; see `docs/errors/<code>.md`. */
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
  }
}

/** True when `error` is a {@link CairnError}, also across module copies where `instanceof` fails. */
export function isCairnError(error: unknown, code?: ErrorCode): error is CairnError {
  if (typeof error !== "object" || error === null) return false;
  const candidate = error as { code?: unknown; name?: unknown };
  // A plain Error with a code is a system error (ECONNREFUSED, ENOENT…), not ours.
  if (typeof candidate.code !== "string" || typeof candidate.name !== "string" || !candidate.name.endsWith("Error") || candidate.name === "Error") return false;
  return code === undefined || candidate.code === code;
}

/** Rebuilds an Error from its journaled form. */
export function deserializeError(error: SerializedError): Error {
  const out = new Error(error.message, error.cause ? { cause: deserializeError(error.cause) } : undefined) as Error & {
    code?: string;
    nonRetryable?: boolean;
    data?: unknown;
  };
  out.name = error.name;
  if (error.code) out.code = error.code;
  if (error.stack) out.stack = error.stack;
  if (error.nonRetryable) out.nonRetryable = true;
  if (error.data !== undefined) out.data = error.data;
  return out;
}
