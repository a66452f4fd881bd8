import { describe, expect, it } from "vitest";
import { classifyProviderError, ModelProviderError, retryAfterMs } from "./provider-errors.js";
import { ScriptExhaustedError } from "./errors.js";

describe("provider error classification", () => {
  it.each([
    [400, false],
    [401, false],
    [403, false],
    [404, false],
    [422, false],
    [408, true],
    [409, true],
    [429, true],
    [500, true],
    [503, true],
    [529, true],
  ])("HTTP %i → retryable %s", (status, retryable) => {
    const e = classifyProviderError(Object.assign(new Error(`${status} nope`), { status }), "openai", "m") as ModelProviderError;
    expect(e).toBeInstanceOf(ModelProviderError);
    expect(e.nonRetryable).toBe(!retryable);
    expect(e.code).toBe(retryable ? "MODEL_PROVIDER_FAILED" : "MODEL_REQUEST_REJECTED");
    expect(e.providerMessage).toBe("nope");
  });

  it("a network failure (no status) is retryable; an abort and Cairn's own errors pass through", () => {
    expect((classifyProviderError(new TypeError("fetch failed"), "anthropic", "m") as ModelProviderError).nonRetryable).toBe(false);
    const controller = new AbortController();
    controller.abort();
    const abort = new Error("aborted");
    expect(classifyProviderError(abort, "openai", "m", controller.signal)).toBe(abort);
    const own = new ScriptExhaustedError(1, 1, "x");
    expect(classifyProviderError(own, "openai", "m")).toBe(own);
  });

  it("reads retry-after-ms, Retry-After in seconds or as an HTTP date, from Headers or a plain record", () => {
    expect(retryAfterMs(new Headers({ "retry-after-ms": "1500", "retry-after": "9" }))).toBe(1500);
    expect(retryAfterMs({ "Retry-After": "2" })).toBe(2000);
    const now = Date.parse("2026-11-26T00:00:00Z");
    expect(retryAfterMs({ "retry-after": "Thu, 26 Nov 2026 00:00:05 GMT" }, now)).toBe(5000);
    expect(retryAfterMs({ "retry-after": "soon" })).toBeUndefined();
    expect(retryAfterMs(undefined)).toBeUndefined();
  });
});
