import type { Command } from "commander";
import { formatMs, toMs } from "../../core/duration.js";
import type { HumanRequest } from "../../core/store.js";
import type { Engine } from "../../engine/engine.js";
import { overviewSummary, type OverviewRun, type OverviewStore, type OverviewSummary } from "../../server/overview/summary.js";
import { UsageError } from "../errors.js";
import { oneLine, table, truncate } from "../format.js";
import { escapeTerminal } from "../terminal-escape.js";
import { jsonOption, printJson, storeOption, withEngine, type JsonOptions, type StoreOptions } from "../context.js";

/** Statuses a run does not leave: counted as finished for the throughput figure. */
const FINISHED = ["completed", "failed", "cancelled", "compensated", "dead"] as const;

/** One refresh of `cairn top`: the overview, the oldest open questions, and rates since the previous frame. */
export interface TopFrame {
  summary: OverviewSummary;
  waiting: HumanRequest[];
  /** Runs created and finished per second since the previous frame; null on the first. */
  rates: { startedPerSec: number; finishedPerSec: number } | null;
}

interface TopOptions extends StoreOptions, JsonOptions {
  interval: string;
  since: string;
  once?: boolean;
  frames?: string;
}

/** Registers `cairn top`. */
export function registerTopCommand(program: Command): void {
  const top = program
    .command("top")
    .description("a live view of the store: runs by state, throughput, slowest in flight, stuck runs, people's open questions")
    .option("--interval <duration>", "time between refreshes, e.g. 2s or 500ms", "2s")
    .option("--since <duration>", "window of the failure and spend figures, e.g. 1h or 1d", "1h")
    .option("--once", "print one frame and exit (also the behaviour with --json)")
    .option("--frames <n>", "exit after this many frames");
  storeOption(jsonOption(top)).action(runTop);
}

function duration(text: string, option: string, min: number): number {
  let ms: number;
  try {
    ms = toMs(text);
  } catch {
    throw new UsageError(`${option} must be a duration such as 500ms, 2s or 1h (got ${JSON.stringify(text)}).`);
  }
  if (!(ms >= min)) throw new UsageError(`${option} must be at least ${formatMs(min)} (got ${JSON.stringify(text)}).`);
  return ms;
}

async function runTop(options: TopOptions): Promise<void> {
  const intervalMs = duration(options.interval, "--interval", 100);
  const sinceMs = duration(options.since, "--since", 1000);
  const frames = options.once || options.json ? 1 : options.frames === undefined ? Infinity : Number(options.frames);
  if (!Number.isInteger(frames) && frames !== Infinity) throw new UsageError(`--frames must be a whole number (got ${JSON.stringify(options.frames)}).`);
  if (frames < 1) throw new UsageError("--frames must be at least 1.");
  const live = process.stdout.isTTY === true && frames > 1;

  await withEngine(options, [], async (engine, cli) => {
    const stop = new AbortController();
    const onSignal = (): void => stop.abort();
    process.once("SIGINT", onSignal);
    process.once("SIGTERM", onSignal);
    try {
      let previous: { at: number; summary: OverviewSummary } | null = null;
      for (let frame = 0; frame < frames && !stop.signal.aborted; frame++) {
        if (frame > 0) await pause(intervalMs, stop.signal);
        if (stop.signal.aborted) break;
        const now = Date.now();
        const current = await topFrame(engine, cli.runs, now, sinceMs, previous);
        previous = { at: now, summary: current.summary };
        if (options.json) return printJson(current);
        const lines = renderTop(current, now);
        // A terminal gets the frame in place; a pipe gets frames one after another.
        process.stdout.write(`${live ? "\x1b[H\x1b[2J" : frame > 0 ? "\n" : ""}${lines.map(escapeTerminal).join("\n")}\n`);
      }
    } finally {
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
    }
  });
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}

/** Reads one frame: the overview over `sinceMs`, the five oldest open questions, and rates against `previous`. */
export async function topFrame(
  engine: Engine,
  store: OverviewStore,
  now: number,
  sinceMs: number,
  previous: { at: number; summary: OverviewSummary } | null,
): Promise<TopFrame> {
  const [summary, waiting] = await Promise.all([overviewSummary(engine, store, now - sinceMs, now), engine.listHumanRequests({ status: "pending", limit: 5 })]);
  let rates: TopFrame["rates"] = null;
  if (previous && now > previous.at) {
    const seconds = (now - previous.at) / 1000;
    const finished = (s: OverviewSummary) => FINISHED.reduce((sum, status) => sum + (s.counts.byStatus[status] ?? 0), 0);
    rates = {
      startedPerSec: Math.max(0, summary.counts.total - previous.summary.counts.total) / seconds,
      finishedPerSec: Math.max(0, finished(summary) - finished(previous.summary)) / seconds,
    };
  }
  return { summary, waiting, rates };
}

const STATUSES = ["pending", "running", "suspended", "completed", "failed", "cancelled", "compensated", "dead"] as const;

function usd(micros: number): string {
  const dollars = micros / 1_000_000;
  return dollars === 0 ? "$0" : dollars < 0.01 ? `$${dollars.toPrecision(2)}` : `$${dollars.toFixed(2)}`;
}

function age(run: OverviewRun, now: number): string {
  return formatMs(Math.max(0, now - run.createdAt.getTime()));
}

/** The frame as text lines (not yet escaped: the caller escapes every line it writes). */
export function renderTop(frame: TopFrame, now: number): string[] {
  const { summary, waiting, rates } = frame;
  const by = summary.counts.byStatus;
  const lines = [
    `cairn top · ${new Date(now).toISOString()} · ${summary.workers} worker${summary.workers === 1 ? "" : "s"} · ${summary.counts.total} runs`,
    STATUSES.map((status) => `${status} ${by[status] ?? 0}`).join("  "),
    rates
      ? `throughput: ${rates.startedPerSec.toFixed(1)} runs started/s, ${rates.finishedPerSec.toFixed(1)} finished/s`
      : "throughput: measured from the next refresh",
    `since ${summary.since.toISOString()}: ${summary.failures.scanned} failed · ${summary.spend.modelCalls} model calls · ${usd(summary.spend.costMicros)}`,
    "",
  ];
  lines.push(`slowest in flight (${summary.slowest.length})`);
  if (summary.slowest.length === 0) lines.push("  none");
  else
    lines.push(
      ...table(summary.slowest.slice(0, 5), [
        { header: "  run", cell: (r) => `  ${truncate(r.runId, 40)}` },
        { header: "workflow", cell: (r) => truncate(r.workflow, 24) },
        { header: "status", cell: (r) => r.status },
        { header: "age", cell: (r) => age(r, now) },
        { header: "waiting for", cell: (r) => truncate(r.waitingFor.map((w) => w.kind).join(", ") || "-", 30) },
      ]),
    );
  lines.push("", `waiting for people (${summary.human.pending}${summary.human.pendingCapped ? "+" : ""})`);
  if (waiting.length === 0) lines.push("  none");
  else
    lines.push(
      ...table(waiting, [
        { header: "  request", cell: (r) => `  ${truncate(r.requestId, 48)}` },
        { header: "waiting", cell: (r) => formatMs(Math.max(0, now - r.createdAt)) },
        { header: "question", cell: (r) => truncate(r.question, 50) },
      ]),
    );
  if (summary.stuck.length > 0) {
    lines.push("", `stuck (${summary.stuck.length}): runnable but unclaimed, or suspended with nothing to wait for`);
    for (const run of summary.stuck.slice(0, 5)) lines.push(oneLine(`  ${truncate(run.runId, 48)}  ${run.workflow}  ${run.status}`));
  }
  if (summary.failures.patterns.length > 0) {
    lines.push("", "top failures");
    for (const p of summary.failures.patterns.slice(0, 3)) lines.push(`  ${p.count}× ${truncate(oneLine(p.pattern), 200)}`);
  }
  return lines;
}
