import { setTimeout as delay } from "node:timers/promises";
import { isTerminal } from "../core/run.js";
import type { Engine, JournalEntryView, RunInfo } from "../engine/engine.js";
import { timelineLine } from "./journal-format.js";

/** Options of {@link followRun}. */
export interface FollowOptions {
  /** Poll period. Default 500 ms. */
  intervalMs?: number;
  /** Stops following (resolves with the last run seen). */
  signal?: AbortSignal;
  /** Receives each new journal entry, already formatted as a timeline line. */
  onLine: (line: string, entry: JournalEntryView) => void;
  /** Called when the run's status or waits change (after the entries that changed them); awaited. */
  onRun?: (run: RunInfo) => void | Promise<void>;
}

/** Reads every journal entry after `afterSeq`, page by page. */
export async function readJournal(engine: Engine, runId: string, afterSeq = 0): Promise<JournalEntryView[]> {
  const out: JournalEntryView[] = [];
  for (;;) {
    const page = await engine.journal(runId, { afterSeq, limit: 1000 });
    out.push(...page);
    const last = page[page.length - 1];
    if (!last || page.length < 1000) return out;
    afterSeq = last.seq;
  }
}

/**
 * Prints a run's journal as it grows, until the run finishes or `signal` aborts.
 * Polls the journal (a store-agnostic safety net; nothing here depends on the backend).
 * @returns the run as last seen.
 */
export async function followRun(engine: Engine, runId: string, options: FollowOptions): Promise<RunInfo> {
  const interval = options.intervalMs ?? 500;
  let lastSeq = 0;
  let startedAt: Date | undefined;
  let lastState = "";
  for (;;) {
    const entries = await readJournal(engine, runId, lastSeq);
    for (const entry of entries) {
      startedAt ??= entry.at;
      options.onLine(timelineLine(entry, startedAt), entry);
      lastSeq = entry.seq;
    }
    const run = await engine.getRun(runId);
    const state = `${run.status}:${JSON.stringify(run.waitingFor)}`;
    if (state !== lastState) {
      lastState = state;
      await options.onRun?.(run);
    }
    if ((isTerminal(run.status) && run.entries <= lastSeq) || options.signal?.aborted) return run;
    try {
      await delay(interval, undefined, { signal: options.signal });
    } catch {
      return run;
    }
  }
}
