/**
 * Helpers for the examples' tests: wait on a condition with a deadline instead of sleeping.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
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

/** Waits until the run is suspended on the human request of this op key (e.g. `"review#0"`), and returns the run. */
export function waitForHuman(engine: Engine, runId: string, opKey: string, options: WaitForOptions = {}): Promise<RunInfo> {
  return waitFor(
    async () => {
      const run = await engine.getRun(runId);
      if (run.status === "failed" || run.status === "completed" || run.status === "cancelled")
        throw new GiveUp(`run ${runId} is ${run.status}${run.error ? `: ${run.error.message}` : ""} before asking ${opKey}`);
      return run.status === "suspended" && run.waitingFor.some((w) => w.kind === "human" && w.opKey === opKey) && run;
    },
    { what: `run ${runId} to ask ${opKey}`, ...options },
  );
}

/** Waits for the human request `<runId>:<opKey>` and answers it with `option`, as a person named `by`. */
export async function answerWhenAsked(
  engine: Engine,
  runId: string,
  opKey: string,
  option: string,
  extra: { message?: string; by?: string; timeoutMs?: number } = {},
): Promise<void> {
  await waitForHuman(engine, runId, opKey, extra.timeoutMs === undefined ? {} : { timeoutMs: extra.timeoutMs });
  await engine.respondToHuman(`${runId}:${opKey}`, {
    action: "answer",
    option,
    by: extra.by ?? "tester",
    ...(extra.message === undefined ? {} : { message: extra.message }),
  });
}

/** What a person writes when the code-migration example escalates `src/reports.js`: the caller becomes async. */
export const HAND_FIXED_REPORTS = `import { request } from "modern-http";\n\nexport const loadReport = async (id) => await request("GET", \`/reports/\${id}\`);\n`;

/** Plays the person who fixes `src/reports.js` by hand, keeping its migration stamp. Doing it twice changes nothing. */
export function fixReportsByHand(repo: string): void {
  const path = join(repo, "src/reports.js");
  const stamps = readFileSync(path, "utf8")
    .split("\n")
    .filter((line) => line.startsWith("// migrated-by: "));
  writeFileSync(path, [HAND_FIXED_REPORTS, ...stamps.map((line) => `${line}\n`)].join(""));
}
