/**
 * Classifies what a provider SDK threw into one error Cairn's step retries understand: a request the
 * provider rejected (400, 401, 403, 404, 422 and other 4xx) fails the call at once; a rate limit,
 * timeout, conflict, server error or network failure is retried by the step's policy, no sooner than
 * the provider's `Retry-After`.
 */
import { CairnError } from "../../core/errors.js";

/** HTTP statuses that are worth retrying: timeout, conflict, rate limit; every 5xx is too. */
const RETRYABLE_STATUSES = new Set([408, 409, 429]);

/**
 * A provider call failed. `nonRetryable` is set when the provider rejected the request itself (code
 * `MODEL_REQUEST_REJECTED`: sending it again cannot help); otherwise (code `MODEL_PROVIDER_FAILED`)
 * the step's retry policy retries it, waiting at least `retryAfterMs` when the provider said so.
 */
export class ModelProviderError extends CairnError {
  /** True for a rejected request: the step fails at once. */
  readonly nonRetryable: boolean;
  constructor(
    /** The adapter's provider, e.g. `openai`. */
    readonly provider: string,
    /** The model id the request was for. */
    readonly modelId: string,
    /** The HTTP status, when the provider answered. */
    readonly status: number | undefined,
    /** The provider's own message. */
    readonly providerMessage: string,
    /** How long the provider asked to wait before retrying (`Retry-After` / `retry-after-ms`), when it did. */
    readonly retryAfterMs: number | undefined,
    options?: { cause?: unknown },
  ) {
    const rejected = status !== undefined && status >= 400 && status < 500 && !RETRYABLE_STATUSES.has(status);
    const http = status === undefined ? "" : ` (HTTP ${status})`;
    super(
      rejected ? "MODEL_REQUEST_REJECTED" : "MODEL_PROVIDER_FAILED",
      rejected
        ? `${provider} rejected the request for model "${modelId}"${http}: ${providerMessage}`
        : `${provider} call for model "${modelId}" failed${http}: ${providerMessage}`,
      options,
    );
    this.nonRetryable = rejected;
  }
}

/** Parses `retry-after-ms`, then `Retry-After` (seconds or an HTTP date), from response headers. */
export function retryAfterMs(headers: unknown, now = Date.now()): number | undefined {
  const get = (name: string): string | undefined => {
    if (!headers || typeof headers !== "object") return undefined;
    if (typeof (headers as Headers).get === "function") return (headers as Headers).get(name) ?? undefined;
    for (const [key, value] of Object.entries(headers as Record<string, unknown>)) if (key.toLowerCase() === name && typeof value === "string") return value;
    return undefined;
  };
  const ms = Number(get("retry-after-ms"));
  if (get("retry-after-ms") !== undefined && Number.isFinite(ms) && ms >= 0) return ms;
  const value = get("retry-after")?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * Turns what an SDK threw into a {@link ModelProviderError}. An abort (the step's signal) and Cairn's
 * own errors pass through unchanged. Reads the `openai` / `@anthropic-ai/sdk` `APIError` (`status`,
 * `headers`, `error`) and the AI SDK's `APICallError` (`statusCode`, `responseHeaders`, `isRetryable`).
 */
export function classifyProviderError(error: unknown, provider: string, modelId: string, signal?: AbortSignal): unknown {
  if (signal?.aborted || !(error instanceof Error) || error instanceof CairnError || error.name === "AbortError") return error;
  const e = error as Error & { status?: unknown; statusCode?: unknown; headers?: unknown; responseHeaders?: unknown; error?: unknown };
  const status = typeof e.status === "number" ? e.status : typeof e.statusCode === "number" ? e.statusCode : undefined;
  const headers = e.headers ?? e.responseHeaders;
  return new ModelProviderError(provider, modelId, status, providerMessage(e, status), retryAfterMs(headers), { cause: error });
}

function providerMessage(error: Error & { error?: unknown }, status: number | undefined): string {
  // The SDKs keep the provider's error body: `{ error: { message } }` (OpenAI) or `{ type: "error", error: { message } }` (Anthropic).
  const body = error.error as { message?: unknown; error?: { message?: unknown } } | undefined;
  const fromBody = typeof body?.error?.message === "string" ? body.error.message : typeof body?.message === "string" ? body.message : undefined;
  const message = fromBody ?? error.message;
  return (status === undefined ? message : message.replace(new RegExp(`^${status}\\s+`), "")).slice(0, 2000);
}
