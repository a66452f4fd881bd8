import type { ApiJournalEntry, ApiRun } from "cairn/client";
import { useSyncExternalStore } from "react";

export function ago(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return "—";
  const ms = now - Date.parse(iso);
  if (ms < 0) return `in ${duration(-ms)}`;
  return `${duration(ms)} ago`;
}

export function duration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 10_000) return `${(ms / 1000).toFixed(1)} s`;
  // Round to the smallest unit shown first, then split, so no part reads 60 s, 60 min or 24 h.
  const seconds = Math.round(ms / 1000);
  if (seconds < 60) return `${seconds} s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
  const minutes = Math.round(ms / 60_000);
  if (minutes < 48 * 60) return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
  const hours = Math.round(ms / 3_600_000);
  return `${Math.floor(hours / 24)} d ${hours % 24} h`;
}

const ZONE_KEY = "cairn.timeZone";
const zoneListeners = new Set<() => void>();

/** Which zone the dashboard shows times in: the browser's (`local`, the default) or `utc`; kept in localStorage. */
export type ZoneMode = "local" | "utc";

export function zoneMode(): ZoneMode {
  try {
    return window.localStorage.getItem(ZONE_KEY) === "utc" ? "utc" : "local";
  } catch {
    return "local";
  }
}

/** Switches every time on the dashboard to `mode` and remembers it in this browser. */
export function setZoneMode(mode: ZoneMode): void {
  try {
    window.localStorage.setItem(ZONE_KEY, mode);
  } catch {
    // storage refused (private mode): the choice lasts for this page only
  }
  cachedMode = mode;
  for (const listener of zoneListeners) listener();
}

let cachedMode: ZoneMode | undefined;
function mode(): ZoneMode {
  return (cachedMode ??= zoneMode());
}

/** The zone mode, re-rendering the caller when it is switched. */
export function useZoneMode(): ZoneMode {
  return useSyncExternalStore((listener) => {
    zoneListeners.add(listener);
    return () => zoneListeners.delete(listener);
  }, mode);
}

interface Parts {
  date: string;
  time: string;
  zone: string;
}

function partsOf(at: number): Parts {
  const utc = mode() === "utc";
  const format = new Intl.DateTimeFormat("en-US", {
    ...(utc ? { timeZone: "UTC" } : {}),
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
    hourCycle: "h23",
    timeZoneName: "short",
  });
  const p: Record<string, string> = {};
  for (const part of format.formatToParts(new Date(at))) p[part.type] = part.value;
  return { date: `${p.year}-${p.month}-${p.day}`, time: `${p.hour}:${p.minute}:${p.second}`, zone: utc ? "UTC" : (p.timeZoneName ?? "local") };
}

function toMs(at: string | number): number {
  return typeof at === "number" ? at : Date.parse(at);
}

/**
 * The one way the dashboard writes an instant: `2026-11-26 06:06:00 UTC` in the chosen zone
 * ({@link useZoneMode}), the date left out only with `short` when it is today.
 */
export function dateTime(at: string | number | null | undefined, options: { short?: boolean; now?: number } = {}): string {
  if (at === null || at === undefined || at === "") return "—";
  const ms = toMs(at);
  if (Number.isNaN(ms)) return String(at);
  const parts = partsOf(ms);
  const today = options.short === true && partsOf(options.now ?? Date.now()).date === parts.date;
  return `${today ? "" : `${parts.date} `}${parts.time} ${parts.zone}`;
}

/** A journal row's time: `06:06:00.123` when today, else with its date; the zone is in the column's heading and the title. */
export function clock(at: string | number, now = Date.now()): string {
  const ms = toMs(at);
  const parts = partsOf(ms);
  const today = partsOf(now).date === parts.date;
  return `${today ? "" : `${parts.date} `}${parts.time}.${String(new Date(ms).getUTCMilliseconds()).padStart(3, "0")}`;
}

/** The zone times are shown in, as written after them (`UTC`, `GMT+1`, `CET`). */
export function zoneLabel(): string {
  return partsOf(Date.now()).zone;
}

/**
 * A recorded value that is an instant as ms, else undefined: a journaled Date (`{"$cairn":"date","v":ms}`),
 * epoch milliseconds within 1990–2100, or an ISO date-time string.
 */
export function instantOf(value: unknown): number | undefined {
  const tagged = value as { $cairn?: unknown; v?: unknown } | null;
  if (tagged && typeof tagged === "object" && tagged.$cairn === "date" && typeof tagged.v === "number") return tagged.v;
  if (typeof value === "number" && Number.isInteger(value) && value > 631_152_000_000 && value < 4_102_444_800_000) return value;
  if (typeof value === "string" && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/.test(value)) {
    const ms = Date.parse(value);
    return Number.isNaN(ms) ? undefined : ms;
  }
  return undefined;
}

/** How long the run has taken: to its end, or until now. */
export function runAge(run: Pick<ApiRun, "createdAt" | "finishedAt">, now = Date.now()): number {
  return (run.finishedAt ? Date.parse(run.finishedAt) : now) - Date.parse(run.createdAt);
}

/**
 * Micro-dollars as dollars, sub-cent amounts kept to three significant digits: `$0.0455`,
 * `$0.00091`, `$0.50`; whole cents from one dollar up (`$12.30`).
 */
export function usd(micros: number): string {
  if (micros === 0) return "$0";
  const dollars = Math.abs(micros) / 1e6;
  let text: string;
  if (dollars >= 1) text = dollars.toFixed(2);
  else {
    const rounded = Number(dollars.toPrecision(3));
    const decimals = Math.min(8, Math.max(2, 2 - Math.floor(Math.log10(rounded))));
    text = rounded.toFixed(decimals).replace(/(\.\d\d\d*?)0+$/, "$1");
  }
  return `${micros < 0 ? "-" : ""}$${text}`;
}

export function preview(value: unknown, max = 120): string {
  if (value === undefined) return "";
  let text: string;
  try {
    text = typeof value === "string" ? value : JSON.stringify(value);
  } catch {
    text = String(value);
  }
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

export interface Spend {
  inputTokens: number;
  outputTokens: number;
  costMicros: number;
  modelCalls: number;
  /** Distinct steps (op keys) the run started or journaled an outcome for. */
  steps: number;
  /** Attempts beyond each step's first (each `step.started` after the first of its op key). */
  retries: number;
  /** Steps whose latest outcome is a final failure. */
  failedSteps: number;
}

/** Budget totals are folds of the journal: model calls' usage and cost, steps, retries and failed steps. */
export function spendOf(entries: ApiJournalEntry[]): Spend {
  const spend: Spend = { inputTokens: 0, outputTokens: 0, costMicros: 0, modelCalls: 0, steps: 0, retries: 0, failedSteps: 0 };
  const attempts = new Map<string, number>();
  const failed = new Set<string>();
  for (const entry of entries) {
    const key = entry.opKey ?? "";
    if (entry.kind === "step.started") {
      attempts.set(key, (attempts.get(key) ?? 0) + 1);
    } else if (entry.kind === "step.completed") {
      if (!attempts.has(key)) attempts.set(key, 0);
      failed.delete(key);
      const call = modelCallOf(entry);
      if (call) {
        spend.modelCalls++;
        spend.inputTokens += call.inputTokens;
        spend.outputTokens += call.outputTokens;
        spend.costMicros += call.costMicros;
      }
    } else if (entry.kind === "step.failed") {
      if (!attempts.has(key)) attempts.set(key, 0);
      if ((entry.data as { final?: boolean }).final) failed.add(key);
    }
  }
  spend.steps = attempts.size;
  for (const count of attempts.values()) spend.retries += Math.max(0, count - 1);
  spend.failedSteps = failed.size;
  return spend;
}

/** A model call's usage, when the entry is one (the agent layer journals usage and costMicros with the result). */
export function modelCallOf(entry: ApiJournalEntry): { inputTokens: number; outputTokens: number; costMicros: number } | undefined {
  const result = (entry.data as { result?: { usage?: { inputTokens?: number; outputTokens?: number }; costMicros?: number } } | null)?.result;
  if (!result || typeof result !== "object" || !result.usage || typeof result.usage !== "object") return undefined;
  return {
    inputTokens: Number(result.usage.inputTokens ?? 0),
    outputTokens: Number(result.usage.outputTokens ?? 0),
    costMicros: Number(result.costMicros ?? 0),
  };
}

/** What a suspended run waits for, in words. */
export function waitingText(run: Pick<ApiRun, "waitingFor">): string {
  return run.waitingFor
    .map((wait) => {
      const w = wait as Record<string, unknown>;
      switch (wait.kind) {
        case "event":
          return `event “${String(w.type)}”`;
        case "human":
          return "a person";
        case "timer":
          return `timer ${typeof w.wakeAt === "number" ? `until ${dateTime(w.wakeAt, { short: true })} (${ago(new Date(w.wakeAt).toISOString())})` : ""}`.trim();
        case "retry":
          return `retry of ${wait.opKey}`;
        case "flow":
          return `a flow-control slot for ${wait.opKey}`;
        case "child":
          return `child ${String(w.childRunId)}`;
        default:
          return wait.kind;
      }
    })
    .join(", ");
}

/** A size in bytes, in B, KiB or MiB. */
export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}
