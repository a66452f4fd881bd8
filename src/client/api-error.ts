import { CairnError, type ErrorCode } from "../core/errors.js";

/**
 * An error answered by the server (`{ error: { code, message } }`), with its HTTP status.
 * `isCairnError(error, "RUN_NOT_FOUND")` works on it like on the library's errors.
 */
export class CairnApiError extends CairnError {
  constructor(
    code: string,
    message: string,
    readonly status: number,
  ) {
    super(code as ErrorCode, message);
  }
}

/** The {@link CairnApiError} of a response that is not ok: the server's `{ error: { code, message } }`, or one made from the status. */
export async function toApiError(response: Response): Promise<CairnApiError> {
  const text = await response.text().catch(() => "");
  try {
    const { error } = JSON.parse(text) as { error?: { code?: unknown; message?: unknown } };
    if (error && typeof error.code === "string" && typeof error.message === "string") return new CairnApiError(error.code, error.message, response.status);
  } catch {
    // not a Cairn error body (a proxy's page, say)
  }
  const code =
    response.status === 404 ? "ROUTE_NOT_FOUND" : response.status === 503 ? "STORE_UNAVAILABLE" : response.status >= 500 ? "INTERNAL_ERROR" : "INVALID_INPUT";
  return new CairnApiError(code, `HTTP ${response.status}${text ? `: ${text.slice(0, 500)}` : ""}`, response.status);
}
