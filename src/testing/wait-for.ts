/** Options of {@link waitFor}. */
export interface WaitForOptions {
  /** Give up after this long. Default 10 s. */
  timeoutMs?: number;
  /** Check this often. Default 10 ms. */
  intervalMs?: number;
  /** Named in the error when the deadline passes. */
  what?: string;
}

/**
 * Polls `probe` until it returns a value other than `undefined`, `null` or `false`, and returns it.
 * Throws when the deadline passes, with the last value seen.
 * @example
 * const run = await waitFor(async () => { const r = await engine.getRun(id); return r.status === "suspended" && r; });
 */
export async function waitFor<T>(probe: () => T | Promise<T>, options: WaitForOptions = {}): Promise<Exclude<T, undefined | null | false>> {
  const deadline = Date.now() + (options.timeoutMs ?? 10_000);
  let last: unknown;
  for (;;) {
    try {
      last = await probe();
      if (last !== undefined && last !== null && last !== false) return last as Exclude<T, undefined | null | false>;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `waitFor${options.what ? ` (${options.what})` : ""}: condition not met within ${options.timeoutMs ?? 10_000}ms; last value: ${String(last instanceof Error ? last.message : JSON.stringify(last))}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 10));
  }
}
