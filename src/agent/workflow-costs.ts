/**
 * Costs per workflow over a time window: the {@link RunCosts} of every run created in it, added up
 * by workflow. Reads each run's journal, so it is bounded: at most `maxRuns` runs (newest first),
 * with `truncated` set when the window holds more.
 */
import { isTerminal } from "../core/run-status.js";
import type { Engine, RunInfo } from "../engine/engine.js";
import type { Usage } from "./model/schemas.js";
import { readRunCosts, type RunCostFigures, type RunCosts } from "./run-costs.js";

/**
 * The summed costs of one workflow's runs: the {@link RunCosts} figures, with the model spend cut to
 * its money. Durations in ms, sizes in bytes, money in micro-dollars.
 */
export interface WorkflowCosts extends Omit<RunCostFigures, "model"> {
  workflow: string;
  runs: number;
  /** Model spend; `usage` the tokens of the journaled model responses. */
  model: Pick<RunCostFigures["model"], "modelCalls" | "costMicros" | "unpricedCalls" | "possiblyBilledMicros"> & { usage: Usage };
}

/** What {@link workflowCosts} answers. */
export interface CostTotals {
  since: Date;
  until: Date;
  /** Runs whose costs were added up. */
  runs: number;
  /** More runs were created in the window than were read: the totals cover the newest `runs`. */
  truncated: boolean;
  /** By workflow, most worker time first. */
  workflows: WorkflowCosts[];
}

/** Options of {@link workflowCosts}. */
export interface WorkflowCostsOptions {
  since: number;
  until?: number;
  workflow?: string;
  /** Only runs whose id starts with this (a namespace). */
  runIdPrefix?: string;
  /** Default and at most 2,000. */
  maxRuns?: number;
  /** The time open claims and open questions count up to. */
  now: number;
}

/** The most runs one call reads. */
export const MAX_COST_RUNS = 2000;

/** Adds up the costs of the runs created in `[since, until)`, by workflow. */
export async function workflowCosts(engine: Engine, options: WorkflowCostsOptions): Promise<CostTotals> {
  const now = options.now;
  const until = options.until ?? now;
  const maxRuns = Math.min(options.maxRuns ?? MAX_COST_RUNS, MAX_COST_RUNS);
  const byWorkflow = new Map<string, WorkflowCosts>();
  let runs = 0;
  let truncated = false;
  let cursor: string | undefined;
  do {
    const page = await engine.listRuns({
      createdAfter: options.since,
      createdBefore: until,
      limit: Math.min(200, maxRuns - runs + 1),
      previewBytes: 0,
      // System runs (alert runs) have no costs of their own; a workflow filter naming one still lists them.
      excludeSystem: true,
      ...(options.workflow ? { workflow: options.workflow } : {}),
      ...(options.runIdPrefix ? { runIdPrefix: options.runIdPrefix } : {}),
      ...(cursor ? { cursor } : {}),
    });
    let take = page.runs;
    if (runs + take.length > maxRuns) {
      take = take.slice(0, maxRuns - runs);
      truncated = true;
    }
    const costs = await mapLimited(take, READ_CONCURRENCY, (run) => costsOf(engine, run, now));
    for (const [i, run] of take.entries()) add(byWorkflow, run.workflow, costs[i]!);
    runs += take.length;
    cursor = page.nextCursor;
  } while (cursor && !truncated);
  return {
    since: new Date(options.since),
    until: new Date(until),
    runs,
    truncated,
    workflows: [...byWorkflow.values()].sort((a, b) => b.workerMs - a.workerMs || a.workflow.localeCompare(b.workflow)),
  };
}

/** Journals read at once: a PostgreSQL pool overlaps the reads; SQLite reads one after another anyway. */
const READ_CONCURRENCY = 8;
/** Finished runs' costs kept per engine (a finished run's journal no longer changes). */
const MAX_CACHED = 20_000;
const finishedCosts = new WeakMap<Engine, Map<string, RunCosts>>();

/**
 * A run's costs; a finished run's are read once and kept, keyed by its last update (a retried run
 * updates its row, so it is read again).
 */
async function costsOf(engine: Engine, run: RunInfo, now: number): Promise<RunCosts> {
  if (!isTerminal(run.status)) return readRunCosts(engine, run.runId, now);
  let cache = finishedCosts.get(engine);
  if (!cache) finishedCosts.set(engine, (cache = new Map()));
  const key = `${run.updatedAt.getTime()}:${run.runId}`;
  const cached = cache.get(key);
  if (cached) return cached;
  const costs = await readRunCosts(engine, run.runId, now);
  if (cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value!);
  cache.set(key, costs);
  return costs;
}

async function mapLimited<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return out;
}

function add(byWorkflow: Map<string, WorkflowCosts>, workflow: string, costs: RunCosts): void {
  let total = byWorkflow.get(workflow);
  if (!total) {
    total = {
      workflow,
      runs: 0,
      workerMs: 0,
      claims: 0,
      stepMs: 0,
      stepAttempts: 0,
      toolCalls: Object.create(null) as Record<string, number>, // tool names are keys: no prototype to write through
      human: { requests: 0, pending: 0, waitMs: 0 },
      journal: { entries: 0, bytes: 0 },
      model: {
        modelCalls: 0,
        costMicros: 0,
        unpricedCalls: 0,
        possiblyBilledMicros: 0,
        usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 },
      },
    };
    byWorkflow.set(workflow, total);
  }
  total.runs += 1;
  total.workerMs += costs.workerMs;
  total.claims += costs.claims;
  total.stepMs += costs.stepMs;
  total.stepAttempts += costs.stepAttempts;
  for (const [tool, count] of Object.entries(costs.toolCalls)) total.toolCalls[tool] = (total.toolCalls[tool] ?? 0) + count;
  total.human.requests += costs.human.requests;
  total.human.pending += costs.human.pending;
  total.human.waitMs += costs.human.waitMs;
  total.journal.entries += costs.journal.entries;
  total.journal.bytes += costs.journal.bytes;
  total.model.modelCalls += costs.model.modelCalls;
  total.model.costMicros += costs.model.costMicros;
  total.model.unpricedCalls += costs.model.unpricedCalls;
  total.model.possiblyBilledMicros += costs.model.possiblyBilledMicros;
  for (const key of Object.keys(total.model.usage) as (keyof Usage)[]) total.model.usage[key] += costs.model.usage[key];
}
