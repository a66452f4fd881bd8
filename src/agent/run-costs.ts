/**
 * What a run cost beyond its model calls (seed: compute time, storage, API calls, human attention),
 * folded from its journal: worker time, step time, journal bytes, tool calls by tool, human wait, and
 * the model spend of {@link agentRunView}. Works on any run, finished or running.
 */
import { isTerminalEntry } from "../core/run.js";
import type { JournalEntry } from "../core/journal.js";
import type { Engine, JournalEntryView } from "../engine/engine.js";
import { agentRunView, type AgentSpend } from "./transcript-view.js";

/** A run's costs. Durations in milliseconds, sizes in bytes, money in micro-dollars. */
export interface RunCosts {
  runId: string;
  /**
   * Time workers held the run: from each claim to the release, suspension or end that followed. A
   * claim its worker never gave back (it died) counts up to the last entry that worker wrote.
   */
  workerMs: number;
  /** Times a worker took the run: the first start, each resumption and each recovery after a crash. */
  claims: number;
  /** Sum of every step attempt's time from its journaled intent to its journaled outcome. */
  stepMs: number;
  /** Step attempts (retries and re-runs after crashes included). */
  stepAttempts: number;
  /** Agent tool calls with a journaled outcome, by tool name. */
  toolCalls: Record<string, number>;
  /** Questions to people: how many, how many are still open, and how long people took (open ones up to now). */
  human: { requests: number; pending: number; waitMs: number };
  /**
   * The run's journal: entries, and bytes of their encoded payloads (what the run journaled, counted
   * before large payloads go to blobs and before encryption; docs/operations/payloads.md).
   */
  journal: { entries: number; bytes: number };
  /** Model spend, as {@link agentRunView} folds it (zero for a run that made no model calls). */
  model: Omit<AgentSpend, "limits">;
  /**
   * With `includeChildren` ({@link readRunCosts}, `GET /runs/:id/costs?includeChildren=true`): the
   * run's child runs, theirs, and so on, and every figure summed over this run and all of them (as an
   * agent's budget adds its sub-agents' spend to its own).
   */
  children?: RunCostsRollUp;
}

/** A run's cost figures alone: what sums over runs (a roll-up, a workflow's total) add up. */
export type RunCostFigures = Omit<RunCosts, "runId" | "children">;

/** A run's costs summed with those of its descendants. */
export interface RunCostsRollUp {
  /** Descendant runs counted (children, grandchildren, …). */
  runs: number;
  /** The ids of the run's direct children, oldest first. */
  childRunIds: string[];
  /** True when the run has more than {@link MAX_ROLL_UP_RUNS} descendants: the sum stops there. */
  truncated: boolean;
  /** Every figure of this run plus those of its descendants. */
  total: RunCostFigures;
}

/** Most descendants a roll-up reads (each is one journal read). */
export const MAX_ROLL_UP_RUNS = 500;

const TOOL_KEY = /\/tool-[^/]+#\d+$/;

/**
 * Folds a run's journal into its costs. `entries` are the decoded views (for intents, results and
 * human requests); `stored` the same entries as the store holds them (for their sizes); `running`
 * says whether a worker holds the run now, so its current claim counts up to `now`.
 */
export function runCosts(runId: string, entries: readonly JournalEntryView[], stored: readonly JournalEntry[], running: boolean, now: number): RunCosts {
  const costs: RunCosts = {
    runId,
    workerMs: 0,
    claims: 0,
    stepMs: 0,
    stepAttempts: 0,
    toolCalls: Object.create(null) as Record<string, number>, // tool names are keys: no prototype to write through
    human: { requests: 0, pending: 0, waitMs: 0 },
    journal: { entries: stored.length, bytes: 0 },
    model: modelSpend(entries),
  };
  for (const entry of stored) costs.journal.bytes += Buffer.byteLength(entry.payload);

  let claimedAt: number | null = null;
  let lastAt: number | null = null;
  const stepStarted = new Map<string, number>();
  const toolNames = new Map<string, string>();
  const asked = new Map<string, number>();
  for (const entry of entries) {
    const at = entry.at.getTime();
    switch (entry.kind) {
      case "run.claimed":
        // A claim while another is open: the previous worker died; it worked until its last entry.
        if (claimedAt !== null) costs.workerMs += Math.max(0, (lastAt ?? claimedAt) - claimedAt);
        claimedAt = at;
        costs.claims += 1;
        break;
      case "step.started": {
        if (!entry.opKey) break;
        stepStarted.set(entry.opKey, at);
        costs.stepAttempts += 1;
        const intent = (entry.data as { intent?: { tool?: unknown } } | null)?.intent;
        if (TOOL_KEY.test(entry.opKey) && typeof intent?.tool === "string") toolNames.set(entry.opKey, intent.tool);
        break;
      }
      case "step.completed":
      case "step.failed": {
        if (!entry.opKey) break;
        const started = stepStarted.get(entry.opKey);
        if (started !== undefined) costs.stepMs += Math.max(0, at - started);
        stepStarted.delete(entry.opKey);
        const tool = toolNames.get(entry.opKey);
        if (tool !== undefined) costs.toolCalls[tool] = (costs.toolCalls[tool] ?? 0) + 1;
        break;
      }
      case "human.requested":
        asked.set((entry.data as { requestId: string }).requestId, at);
        costs.human.requests += 1;
        break;
      case "human.answered":
      case "human.timedout": {
        const requestId = (entry.data as { requestId: string }).requestId;
        const since = asked.get(requestId);
        if (since !== undefined) costs.human.waitMs += Math.max(0, at - since);
        asked.delete(requestId);
        break;
      }
    }
    if (claimedAt !== null && (entry.kind === "run.released" || entry.kind === "run.suspended" || isTerminalEntry(entry.kind))) {
      costs.workerMs += Math.max(0, at - claimedAt);
      claimedAt = null;
    }
    lastAt = at;
  }
  if (claimedAt !== null) costs.workerMs += Math.max(0, (running ? now : (lastAt ?? claimedAt)) - claimedAt);
  // Questions still open (a run that ended closes its questions: they stop counting at its end).
  const ended = entries.length > 0 && isTerminalEntry(entries[entries.length - 1]!.kind);
  for (const since of asked.values()) {
    if (!ended) costs.human.pending += 1;
    costs.human.waitMs += Math.max(0, (ended ? (lastAt ?? since) : now) - since);
  }
  return costs;
}

function modelSpend(entries: readonly JournalEntryView[]): Omit<AgentSpend, "limits"> {
  const { limits: _, ...spend } = agentRunView(entries).spend;
  return spend;
}

/** One line per figure, for `cairn show`. */
export function runCostLines(costs: RunCosts): string[] {
  const tools = Object.entries(costs.toolCalls)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([tool, count]) => `${tool} ×${count}`);
  const lines = [
    `worker time   ${seconds(costs.workerMs)} over ${costs.claims} claim${costs.claims === 1 ? "" : "s"}; steps ${seconds(costs.stepMs)} in ${costs.stepAttempts} attempt${costs.stepAttempts === 1 ? "" : "s"}`,
    `journal       ${costs.journal.entries} entries, ${bytes(costs.journal.bytes)}`,
  ];
  if (tools.length > 0) lines.push(`tool calls    ${tools.join(", ")}`);
  if (costs.human.requests > 0)
    lines.push(
      `people        ${costs.human.requests} question${costs.human.requests === 1 ? "" : "s"}, waited ${seconds(costs.human.waitMs)}${costs.human.pending > 0 ? ` (${costs.human.pending} open)` : ""}`,
    );
  return lines;
}

function seconds(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 120_000) return `${(ms / 1000).toFixed(1)} s`;
  if (ms < 7_200_000) return `${(ms / 60_000).toFixed(1)} min`;
  return `${(ms / 3_600_000).toFixed(1)} h`;
}

function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

/**
 * Reads a run's journal (decoded and as stored, a page at a time) and folds its {@link RunCosts}.
 * With `includeChildren`, also those of its descendants (breadth first, at most
 * {@link MAX_ROLL_UP_RUNS}), summed in `children`; `canSee` leaves out runs the caller may not read.
 */
export async function readRunCosts(
  engine: Engine,
  runId: string,
  now: number,
  options: { includeChildren?: boolean; canSee?: (runId: string) => boolean } = {},
): Promise<RunCosts> {
  const own = await readOneRunCosts(engine, runId, now);
  if (!options.includeChildren) return own;
  const { runId: _, ...total } = own;
  const childRunIds = await childrenOf(engine, runId, options.canSee);
  const queue = [...childRunIds];
  let runs = 0;
  let truncated = false;
  while (queue.length > 0) {
    if (runs >= MAX_ROLL_UP_RUNS) {
      truncated = true;
      break;
    }
    const next = queue.shift()!;
    const { runId: __, ...child } = await readOneRunCosts(engine, next, now);
    addCosts(total, child);
    runs += 1;
    queue.push(...(await childrenOf(engine, next, options.canSee)));
  }
  return { ...own, children: { runs, childRunIds, truncated, total } };
}

async function childrenOf(engine: Engine, runId: string, canSee: ((runId: string) => boolean) | undefined): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await engine.store.listRuns({ parentRunId: runId, limit: 1000, ...(cursor === undefined ? {} : { cursor }) });
    for (const run of page.runs) if (!canSee || canSee(run.runId)) ids.push(run.runId);
    cursor = page.nextCursor;
  } while (cursor !== undefined && ids.length < MAX_ROLL_UP_RUNS);
  return ids.reverse(); // listed newest first
}

/** Adds `b`'s figures to `a` (in place). */
function addCosts(a: RunCostFigures, b: RunCostFigures): void {
  a.workerMs += b.workerMs;
  a.claims += b.claims;
  a.stepMs += b.stepMs;
  a.stepAttempts += b.stepAttempts;
  for (const [tool, count] of Object.entries(b.toolCalls)) a.toolCalls[tool] = (a.toolCalls[tool] ?? 0) + count;
  a.human = { requests: a.human.requests + b.human.requests, pending: a.human.pending + b.human.pending, waitMs: a.human.waitMs + b.human.waitMs };
  a.journal = { entries: a.journal.entries + b.journal.entries, bytes: a.journal.bytes + b.journal.bytes };
  const m = { ...a.model, usage: { ...a.model.usage } };
  for (const key of Object.keys(m.usage) as (keyof typeof m.usage)[]) m.usage[key] += b.model.usage[key];
  for (const key of [
    "modelCalls",
    "toolCalls",
    "costMicros",
    "unpricedCalls",
    "possiblyBilledMicros",
    "unconfirmedSends",
    "inFlightMicros",
    "inFlightCalls",
  ] as const)
    m[key] += b.model[key];
  a.model = m;
}

async function readOneRunCosts(engine: Engine, runId: string, now: number): Promise<RunCosts> {
  const run = await engine.getRun(runId);
  const entries: JournalEntryView[] = [];
  const stored: JournalEntry[] = [];
  for (let afterSeq = 0; ;) {
    const [views, rows] = await Promise.all([engine.journal(runId, { afterSeq, limit: PAGE }), engine.store.readJournal(runId, { afterSeq, limit: PAGE })]);
    entries.push(...views);
    stored.push(...rows);
    const last = rows[rows.length - 1];
    if (!last || rows.length < PAGE) break;
    afterSeq = last.seq;
  }
  return runCosts(runId, entries, stored, run.status === "running", now);
}

const PAGE = 1000;
