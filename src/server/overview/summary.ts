import { errorPattern } from "../../core/error-pattern.js";
import type { RunStatus } from "../../core/run.js";
import { decode } from "../../core/serialize.js";
import type { Engine, RunInfo } from "../../engine/engine.js";
import type { RunStore } from "../../core/store.js";

/** What the overview reads from the store itself: grouped run counts and completed steps (for spend). */
export type OverviewStore = Pick<RunStore, "countRuns" | "listRunEntries">;

/** How much the summary reads at most, so one request stays bounded at any volume. */
export const OVERVIEW_LIMITS = { failedRuns: 5000, modelEntries: 50_000, inFlight: 2000, answered: 1000, pending: 1000, namespacedRuns: 20_000 } as const;

/** A run as the overview lists it: no input, output or stack, its error message cut to 300 characters. */
export interface OverviewRun {
  runId: string;
  workflow: string;
  version: string;
  status: RunStatus;
  parentRunId: string | null;
  entries: number;
  createdAt: Date;
  updatedAt: Date;
  finishedAt: Date | null;
  waitingFor: RunInfo["waitingFor"];
  error?: { name: string; message: string; code?: string };
}

/** What `GET /overview` answers: every figure the dashboard's overview shows, from one request. */
export interface OverviewSummary {
  since: Date;
  generatedAt: Date;
  /** Runs by status over all runs in the store (not only the window). */
  counts: { total: number; byStatus: Record<string, number> };
  failures: {
    /** Failed runs created since `since`, read newest first. */
    scanned: number;
    /** More failed runs than {@link OVERVIEW_LIMITS}.failedRuns: the groups cover the newest ones. */
    truncated: boolean;
    patterns: { pattern: string; count: number; workflows: string[]; exampleRunId: string; example: string }[];
    steps: { workflow: string; step: string; count: number; lastRunId: string; lastAt: Date; lastError: string }[];
  };
  spend: {
    modelCalls: number;
    inputTokens: number;
    outputTokens: number;
    costMicros: number;
    /** More model calls than {@link OVERVIEW_LIMITS}.modelEntries: the figures cover the oldest runs of the window. */
    truncated: boolean;
    byWorkflow: { workflow: string; runs: number; modelCalls: number; tokens: number; costMicros: number }[];
    /** Top-level runs by cost, their children's spend included. */
    topRuns: { runId: string; workflow: string; costMicros: number; tokens: number; children: number }[];
  };
  slowest: OverviewRun[];
  stuck: OverviewRun[];
  human: { pending: number; pendingCapped: boolean; answered: number; medianWaitMs: number | null; longestWaitMs: number | null; timedOut: number };
  workers: number;
}

/** The run without its payloads. */
export function overviewRun(run: RunInfo): OverviewRun {
  return {
    runId: run.runId,
    workflow: run.workflow,
    version: run.version,
    status: run.status,
    parentRunId: run.parentRunId,
    entries: run.entries,
    createdAt: run.createdAt,
    updatedAt: run.updatedAt,
    finishedAt: run.finishedAt,
    waitingFor: run.waitingFor.slice(0, 5),
    ...(run.error ? { error: { name: run.error.name, message: run.error.message.slice(0, 300), ...(run.error.code ? { code: run.error.code } : {}) } } : {}),
  };
}

/**
 * Gathers the overview: store aggregates (counts, spend), failures grouped by pattern, and the small
 * lists. With a `prefix` (a namespaced token's `"<namespace>/"`) only runs whose id starts with it
 * count; their status counts then come from paging the runs (at most {@link OVERVIEW_LIMITS}.namespacedRuns).
 */
export async function overviewSummary(
  engine: Engine,
  store: OverviewStore,
  since: number,
  now = Date.now(),
  prefix: string | null = null,
): Promise<OverviewSummary> {
  const [counts, failures, spend, slowest, stuck, human, workers] = await Promise.all([
    prefix === null ? statusCounts(store) : prefixCounts(engine, prefix),
    failureGroups(engine, since, prefix),
    spendSince(engine, store, since, prefix),
    slowestInFlight(engine, now, prefix),
    engine
      .listStuckRuns({ limit: prefix === null ? 10 : 1000 })
      .then((runs) => runs.filter((run) => prefix === null || run.runId.startsWith(prefix)).slice(0, 10)),
    humanFigures(engine, prefix),
    engine.listWorkers(),
  ]);
  return {
    since: new Date(since),
    generatedAt: new Date(now),
    counts,
    failures,
    spend,
    slowest,
    stuck: stuck.map(overviewRun),
    human,
    workers: workers.length,
  };
}

async function statusCounts(store: OverviewStore): Promise<OverviewSummary["counts"]> {
  const byStatus: Record<string, number> = {};
  let total = 0;
  for (const row of await store.countRuns({ excludeSystem: true })) {
    byStatus[row.status] = (byStatus[row.status] ?? 0) + row.count;
    total += row.count;
  }
  return { total, byStatus };
}

/** Counts by status of one namespace's runs: paged, as the store's grouped count spans every namespace. */
async function prefixCounts(engine: Engine, prefix: string): Promise<OverviewSummary["counts"]> {
  const byStatus: Record<string, number> = {};
  let total = 0;
  let cursor: string | undefined;
  do {
    const page = await engine.listRuns({ runIdPrefix: prefix, excludeSystem: true, limit: 1000, ...(cursor ? { cursor } : {}) });
    for (const run of page.runs) byStatus[run.status] = (byStatus[run.status] ?? 0) + 1;
    total += page.runs.length;
    cursor = page.nextCursor;
  } while (cursor && total < OVERVIEW_LIMITS.namespacedRuns);
  return { total, byStatus };
}

/** A step's name without its call counter and loop iterations: `turn#0/3/model#0` is `turn/model`. */
export function stepName(opKey: string): string {
  return opKey
    .split("/")
    .filter((part) => !/^\d+$/.test(part))
    .map((part) => part.replace(/#\d+$/, ""))
    .join("/");
}

async function failureGroups(engine: Engine, since: number, prefix: string | null): Promise<OverviewSummary["failures"]> {
  const patterns = new Map<string, { pattern: string; count: number; workflows: Set<string>; exampleRunId: string; example: string }>();
  const steps = new Map<string, OverviewSummary["failures"]["steps"][number]>();
  let scanned = 0;
  let cursor: string | undefined;
  do {
    const page = await engine.listRuns({
      status: "failed",
      createdAfter: since,
      excludeSystem: true,
      limit: 1000,
      ...(prefix === null ? {} : { runIdPrefix: prefix }),
      ...(cursor ? { cursor } : {}),
    });
    for (const run of page.runs) {
      scanned++;
      if (!run.error) continue;
      const head = `${run.error.name}${run.error.code ? ` [${run.error.code}]` : ""}: ${run.error.message}`;
      const pattern = errorPattern(head);
      const group = patterns.get(pattern) ?? { pattern, count: 0, workflows: new Set<string>(), exampleRunId: run.runId, example: head.slice(0, 300) };
      group.count++;
      group.workflows.add(run.workflow);
      patterns.set(pattern, group);
      const opKey = (run.error as { opKey?: unknown }).opKey;
      if (typeof opKey === "string") {
        const step = stepName(opKey);
        const key = `${run.workflow}\0${step}`;
        const found = steps.get(key);
        if (found) found.count++;
        else {
          // Newest first: the first run seen has the last error; a step's own error is the cause of STEP_FAILED.
          const cause = (run.error as { cause?: { name?: string; message?: string } }).cause;
          const lastError = cause?.message ? `${cause.name ?? "Error"}: ${cause.message}` : run.error.message;
          steps.set(key, {
            workflow: run.workflow,
            step,
            count: 1,
            lastRunId: run.runId,
            lastAt: run.finishedAt ?? run.updatedAt,
            lastError: lastError.slice(0, 300),
          });
        }
      }
    }
    cursor = page.nextCursor;
  } while (cursor && scanned < OVERVIEW_LIMITS.failedRuns);
  const top = [...patterns.values()].sort((a, b) => b.count - a.count).slice(0, 10);
  return {
    scanned,
    truncated: cursor !== undefined,
    patterns: top.map((group) => ({ ...group, workflows: [...group.workflows].slice(0, 10) })),
    steps: [...steps.values()].sort((a, b) => b.count - a.count).slice(0, 10),
  };
}

/** The usage and cost an agent's model step journals with its result, if the entry is one. */
function modelCall(payload: string): { tokens: number; input: number; output: number; cost: number } | undefined {
  let data: unknown;
  try {
    data = decode(payload);
  } catch {
    return undefined;
  }
  const result = (data as { result?: unknown } | null)?.result as
    { usage?: { inputTokens?: unknown; outputTokens?: unknown }; costMicros?: unknown } | undefined;
  if (!result || typeof result !== "object" || !result.usage || typeof result.usage !== "object") return undefined;
  const number = (value: unknown) => (typeof value === "number" && Number.isFinite(value) && value > 0 ? value : 0);
  const input = number(result.usage.inputTokens);
  const output = number(result.usage.outputTokens);
  return { input, output, tokens: input + output, cost: number(result.costMicros) };
}

async function spendSince(engine: Engine, store: OverviewStore, since: number, prefix: string | null): Promise<OverviewSummary["spend"]> {
  const spend: OverviewSummary["spend"] = { modelCalls: 0, inputTokens: 0, outputTokens: 0, costMicros: 0, truncated: false, byWorkflow: [], topRuns: [] };
  const byWorkflow = new Map<string, { workflow: string; runs: Set<string>; modelCalls: number; tokens: number; costMicros: number }>();
  const byRun = new Map<string, { workflow: string; parentRunId: string | null; costMicros: number; tokens: number }>();
  let after: { createdAt: number; runId: string; seq: number } | undefined;
  let read = 0;
  for (;;) {
    const rows = await store.listRunEntries({ kind: "step.completed", createdAfter: since, limit: 1000, ...(after ? { after } : {}) });
    for (const row of rows) {
      if (prefix !== null && !row.entry.runId.startsWith(prefix)) continue;
      const call = modelCall(row.entry.payload);
      if (!call) continue;
      spend.modelCalls++;
      spend.inputTokens += call.input;
      spend.outputTokens += call.output;
      spend.costMicros += call.cost;
      const wf = byWorkflow.get(row.workflow) ?? { workflow: row.workflow, runs: new Set<string>(), modelCalls: 0, tokens: 0, costMicros: 0 };
      wf.runs.add(row.entry.runId);
      wf.modelCalls++;
      wf.tokens += call.tokens;
      wf.costMicros += call.cost;
      byWorkflow.set(row.workflow, wf);
      const run = byRun.get(row.entry.runId) ?? { workflow: row.workflow, parentRunId: row.parentRunId, costMicros: 0, tokens: 0 };
      run.costMicros += call.cost;
      run.tokens += call.tokens;
      byRun.set(row.entry.runId, run);
    }
    read += rows.length;
    const last = rows.at(-1);
    if (!last || rows.length < 1000) break;
    if (read >= OVERVIEW_LIMITS.modelEntries) {
      spend.truncated = true;
      break;
    }
    after = { createdAt: last.createdAt, runId: last.entry.runId, seq: last.entry.seq };
  }
  spend.byWorkflow = [...byWorkflow.values()]
    .map(({ runs, ...rest }) => ({ ...rest, runs: runs.size }))
    .sort((a, b) => b.costMicros - a.costMicros || b.tokens - a.tokens)
    .slice(0, 20);
  // Children's spend rolls up into their top-level run (as an agent's budget counts it).
  const roots = new Map<string, { runId: string; workflow: string; costMicros: number; tokens: number; children: number }>();
  for (const [runId, run] of byRun) {
    let rootId = runId;
    let parent = run.parentRunId;
    for (let depth = 0; parent !== null && depth < 20; depth++) {
      rootId = parent;
      parent = byRun.get(parent)?.parentRunId ?? null;
    }
    const root = roots.get(rootId) ?? { runId: rootId, workflow: byRun.get(rootId)?.workflow ?? run.workflow, costMicros: 0, tokens: 0, children: 0 };
    root.costMicros += run.costMicros;
    root.tokens += run.tokens;
    if (rootId !== runId) root.children++;
    roots.set(rootId, root);
  }
  spend.topRuns = [...roots.values()].sort((a, b) => b.costMicros - a.costMicros || b.tokens - a.tokens).slice(0, 5);
  return spend;
}

async function slowestInFlight(engine: Engine, now: number, prefix: string | null): Promise<OverviewRun[]> {
  const runs: RunInfo[] = [];
  let cursor: string | undefined;
  do {
    const page = await engine.listRuns({
      status: ["running", "pending"],
      excludeSystem: true,
      limit: 1000,
      ...(prefix === null ? {} : { runIdPrefix: prefix }),
      ...(cursor ? { cursor } : {}),
    });
    runs.push(...page.runs);
    cursor = page.nextCursor;
  } while (cursor && runs.length < OVERVIEW_LIMITS.inFlight);
  const age = (run: RunInfo) => now - run.createdAt.getTime();
  return runs
    .sort((a, b) => age(b) - age(a))
    .slice(0, 5)
    .map(overviewRun);
}

async function humanFigures(engine: Engine, prefix: string | null): Promise<OverviewSummary["human"]> {
  const only = prefix === null ? {} : { runIdPrefix: prefix };
  const [pending, answered] = await Promise.all([
    engine.listHumanRequests({ status: "pending", limit: OVERVIEW_LIMITS.pending, ...only }),
    engine.listHumanRequests({ status: "answered", order: "desc", limit: OVERVIEW_LIMITS.answered, ...only }),
  ]);
  // A request closed by its timeout's escalation, or by its run ending, was not answered by a person.
  const byPerson = answered.filter((r) => r.answeredAt !== null && r.answer !== null && answeredBy(r.answer) !== "timeout" && !r.closedReason);
  const waits = byPerson.map((r) => Number(r.answeredAt) - Number(r.createdAt)).sort((a, b) => a - b);
  return {
    pending: pending.length,
    pendingCapped: pending.length === OVERVIEW_LIMITS.pending,
    answered: waits.length,
    medianWaitMs: waits.length ? waits[Math.floor(waits.length / 2)]! : null,
    longestWaitMs: waits.length ? waits.at(-1)! : null,
    timedOut: answered.filter((r) => r.answer !== null && answeredBy(r.answer) === "timeout").length,
  };
}

/** Who answered, from a stored answer (encoded JSON). */
function answeredBy(answer: string): unknown {
  try {
    return (decode(answer) as { by?: unknown } | null)?.by;
  } catch {
    return undefined;
  }
}
