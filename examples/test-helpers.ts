/**
 * Helpers for the examples' tests: wait on a condition with a deadline instead of sleeping.
 */
import type { Engine, RunInfo } from "cairn";

/** Options of {@link waitFor}. */
export interface WaitForOptions {
  /** Give up after this long. Default 10 s. */
  timeoutMs?: number;
  /** Pause between checks. Default 10 ms. */
  intervalMs?: number;
  /** Says what was awaited, for the error. */
  what?: string;
}

/** Throw this from a `waitFor` check to stop waiting at once (the condition can no longer come true). */
export class GiveUp extends Error {
  override name = "GiveUp";
}

/**
 * Calls `check` until it returns something other than `undefined`, `null` or `false`,
 * and returns that. Errors thrown by `check` count as "not yet" until the deadline,
 * when the last one is reported; a {@link GiveUp} error is thrown at once.
 * @example const info = await waitFor(async () => { const r = await engine.getRun(id); return r.status === "suspended" && r; });
 */
export async function waitFor<T>(check: () => T | Promise<T>, options: WaitForOptions = {}): Promise<Exclude<T, undefined | null | false>> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const intervalMs = options.intervalMs ?? 10;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== null && value !== false) return value as Exclude<T, undefined | null | false>;
      lastError = undefined;
    } catch (error) {
      if (error instanceof GiveUp) throw error;
      lastError = error;
    }
    if (Date.now() >= deadline) {
      const what = options.what ?? "condition";
      throw new Error(`Timed out after ${timeoutMs}ms waiting for ${what}${lastError ? `; last error: ${String(lastError)}` : ""}`, { cause: lastError });
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** Waits until the run is suspended waiting for the event wait with this op key (e.g. `"review#0"`), and returns the run. */
export function waitForEventWait(engine: Engine, runId: string, opKey: string, options: WaitForOptions = {}): Promise<RunInfo> {
  return waitFor(
    async () => {
      const run = await engine.getRun(runId);
      if (run.status === "failed" || run.status === "completed" || run.status === "cancelled")
        throw new GiveUp(`run ${runId} is ${run.status}${run.error ? `: ${run.error.message}` : ""} before waiting for ${opKey}`);
      return run.status === "suspended" && run.waitingFor.some((w) => w.kind === "event" && w.opKey === opKey) && run;
    },
    { what: `run ${runId} to wait for ${opKey}`, ...options },
  );
}
