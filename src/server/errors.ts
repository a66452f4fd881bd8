import { CairnError, isCairnError, type ErrorCode } from "../core/errors.js";

/**
 * A request the HTTP layer refuses before the engine sees it (bad JSON, a body over the limit,
 * a query or body that fails its schema, an unknown route). It carries its HTTP status.
 */
export class RequestError extends CairnError {
  constructor(
    code: ErrorCode,
    message: string,
    readonly status: 400 | 401 | 403 | 404 | 413 | 415 | 421,
  ) {
    super(code, message);
  }
}

/** The store could not be reached; the request may be retried with the same idempotency keys. */
export class StoreUnavailableError extends CairnError {
  constructor(cause: unknown) {
    super("STORE_UNAVAILABLE", `The store is unavailable (${describe(cause)}). Retry later with the same runId / eventId.`, { cause });
  }
}

/** HTTP status of each engine error code. Validation by the HTTP layer is 400; the engine's own INVALID_INPUT is semantic: 422. */
const STATUS_BY_CODE: Partial<Record<ErrorCode, number>> = {
  INVALID_INPUT: 422,
  EVENT_INVALID: 422,
  WORKFLOW_NOT_REGISTERED: 422,
  PAYLOAD_TOO_LARGE: 413,
  RUN_NOT_FOUND: 404,
  VALUE_NOT_FOUND: 404,
  REQUEST_FAILED: 422,
  TIMEOUT: 504,
  TOKEN_NOT_FOUND: 404,
  SCHEDULE_NOT_FOUND: 404,
  INVALID_SCHEDULE: 422,
  UNAUTHORIZED: 401,
  TOKEN_EXPIRED: 401,
  UNSUPPORTED_MEDIA_TYPE: 415,
  CROSS_ORIGIN_REFUSED: 403,
  HOST_NOT_ALLOWED: 421,
  FORBIDDEN: 403,
  HUMAN_REQUEST_NOT_FOUND: 404,
  JOURNAL_ENTRY_NOT_FOUND: 404,
  OUTBOX_MESSAGE_NOT_FOUND: 404,
  ROUTE_NOT_FOUND: 404,
  RUN_CONFLICT: 409,
  RUN_FINISHED: 409,
  RUN_NOT_FAILED: 409,
  RUN_NOT_FINISHED: 409,
  HUMAN_REQUEST_ANSWERED: 409,
  HUMAN_REQUEST_CLOSED: 409,
  ENGINE_CLOSED: 503,
  STORE_UNAVAILABLE: 503,
  STORE_INVALID: 503,
  SCHEMA_TOO_NEW: 503,
  // Stored data the server refuses to return: a 500 that names the run, seq and blob or key.
  PAYLOAD_CORRUPT: 500,
  PAYLOAD_KEY_MISSING: 500,
};

/** Error codes of drivers meaning "the database is not reachable right now", not "the request is wrong". */
const TRANSIENT_CODES = new Set([
  "SQLITE_BUSY",
  "SQLITE_LOCKED",
  "SQLITE_CANTOPEN",
  "SQLITE_IOERR",
  "SQLITE_FULL",
  "SQLITE_READONLY",
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "ENOTFOUND",
  "EAI_AGAIN",
  "57P01", // admin_shutdown
  "57P02",
  "57P03", // cannot_connect_now
  "53300", // too_many_connections
]);

/** True when `error` says the store is down or busy, so the answer is 503 rather than 500. */
export function isStoreUnavailable(error: unknown): boolean {
  if (typeof error !== "object" || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code === "string" && (TRANSIENT_CODES.has(code) || code.startsWith("SQLITE_IOERR") || code.startsWith("08"))) return true;
  if (
    typeof message === "string" &&
    /Connection terminated|database connection is not open|Client has encountered a connection error|pool.*(ended|closed)/i.test(message)
  )
    return true;
  return false;
}

/** What an error becomes on the wire: status, code and a message that says what to do. */
export function toHttpError(error: unknown): { status: number; code: string; message: string; unexpected: boolean } {
  if (error instanceof RequestError) return { status: error.status, code: error.code, message: error.message, unexpected: false };
  if (isCairnError(error)) {
    const status = STATUS_BY_CODE[error.code];
    if (status !== undefined) return { status, code: error.code, message: error.message, unexpected: false };
  }
  if (isStoreUnavailable(error)) {
    const wrapped = new StoreUnavailableError(error);
    return { status: 503, code: wrapped.code, message: wrapped.message, unexpected: false };
  }
  return {
    status: 500,
    code: "INTERNAL_ERROR",
    message: "The server failed unexpectedly; the error is in its log. This is a bug: please report it.",
    unexpected: true,
  };
}

function describe(error: unknown): string {
  if (typeof error === "object" && error !== null) {
    const { code, message } = error as { code?: unknown; message?: unknown };
    return (
      [typeof code === "string" ? code : undefined, typeof message === "string" ? message.split("\n")[0] : undefined].filter(Boolean).join(": ") || "unknown"
    );
  }
  return String(error);
}
