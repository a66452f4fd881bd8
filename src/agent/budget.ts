import { z } from "zod";
import { CairnError, ValidationError } from "../core/errors.js";
import { toMs, type Duration } from "../core/duration.js";
import type { Usage } from "./model/schemas.js";

/** What one agent run (with its child runs) has spent so far: a fold of its journal. */
export interface AgentTotals {
  usage: Usage;
  /** Integer micro-dollars (1 USD = 1,000,000) of the calls whose response was journaled and whose model has a price. */
  costMicros: number;
  /**
   * Estimated micro-dollars of model calls sent without a response ever being journaled (the worker
   * died mid-call): the provider probably billed them. Shown apart from `costMicros`, and charged
   * against cost limits (worst case). Absent in totals journaled before it was counted.
   */
  possiblyBilledMicros?: number;
  /** Model calls whose model has no price: their cost is unknown, not $0 (absent when none). */
  unpricedCalls?: number;
  /** Model calls. */
  steps: number;
  toolCalls: number;
}

/** What a run counts against its cost limits: what it was billed plus what it may have been billed. */
export function spentMicros(totals: AgentTotals): number {
  return totals.costMicros + (totals.possiblyBilledMicros ?? 0);
}

/** Limits of one agent run. Money is in USD here and integer micro-dollars everywhere else. */
export interface AgentBudget {
  /** Token ceilings by kind; `total` counts prompt (fresh, cached, cache-written) and output tokens. */
  maxTokens?: { input?: number; output?: number; cacheRead?: number; cacheWrite?: number; reasoning?: number; total?: number };
  /** Hard ceiling on cost, in USD. */
  maxCostUsd?: number;
  /** Hard ceiling on the run's wall time, from its first turn. */
  maxWallTime?: Duration;
  /** Hard ceiling on model calls. */
  maxSteps?: number;
  /** Hard ceiling on tool calls. */
  maxToolCalls?: number;
  /**
   * Cost tiers in USD, ascending and below `maxCostUsd`: the run spends freely within a tier and
   * asks a person (options `continue` / `stop`) before its next model call could enter the next one.
   */
  tiers?: number[];
  /** How long a tier approval may take and what happens then (default: stop). */
  tierApproval?: { timeout?: Duration; onTimeout?: "continue" | "stop" };
}

const positiveInt = z.number().int().positive();
const usd = z.number().positive().finite();
const BudgetSchema = z
  .object({
    maxTokens: z
      .object({ input: positiveInt, output: positiveInt, cacheRead: positiveInt, cacheWrite: positiveInt, reasoning: positiveInt, total: positiveInt })
      .partial()
      .strict()
      .optional(),
    maxCostUsd: usd.optional(),
    maxWallTime: z.union([z.number().positive(), z.string()]).optional(),
    maxSteps: positiveInt.optional(),
    maxToolCalls: z.number().int().nonnegative().optional(),
    tiers: z.array(usd).optional(),
    tierApproval: z
      .object({ timeout: z.union([z.number().positive(), z.string()]).optional(), onTimeout: z.enum(["continue", "stop"]).optional() })
      .strict()
      .optional(),
  })
  .strict();

/** A budget checked once, with money in micro-dollars. */
export interface ResolvedBudget {
  maxTokens: NonNullable<AgentBudget["maxTokens"]>;
  maxCostMicros: number | null;
  maxWallTimeMs: number | null;
  maxSteps: number | null;
  maxToolCalls: number | null;
  tiersMicros: number[];
  tierApproval: { timeout?: Duration; onTimeout: "continue" | "stop" };
}

/** USD to integer micro-dollars, rounded to the nearest micro-dollar. */
export function usdToMicros(usdAmount: number): number {
  return Math.round(usdAmount * 1_000_000);
}

/** Validates a budget; throws ValidationError naming the bad field. */
export function resolveBudget(agent: string, budget: AgentBudget = {}): ResolvedBudget {
  const parsed = BudgetSchema.safeParse(budget);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ValidationError(`Agent "${agent}": invalid budget at ${issue?.path.join(".") || "(root)"}: ${issue?.message ?? "invalid"}.`);
  }
  const maxCostMicros = budget.maxCostUsd === undefined ? null : usdToMicros(budget.maxCostUsd);
  const tiersMicros = (budget.tiers ?? []).map(usdToMicros);
  if (tiersMicros.some((tier, i) => i > 0 && tier <= tiersMicros[i - 1]!)) throw new ValidationError(`Agent "${agent}": budget tiers must ascend.`);
  if (maxCostMicros !== null && tiersMicros.some((tier) => tier >= maxCostMicros)) {
    throw new ValidationError(`Agent "${agent}": every budget tier must lie below maxCostUsd (${budget.maxCostUsd}).`);
  }
  return {
    maxTokens: budget.maxTokens ?? {},
    maxCostMicros,
    maxWallTimeMs: budget.maxWallTime === undefined ? null : toMs(budget.maxWallTime),
    maxSteps: budget.maxSteps ?? null,
    maxToolCalls: budget.maxToolCalls ?? null,
    tiersMicros,
    tierApproval: { ...budget.tierApproval, onTimeout: budget.tierApproval?.onTimeout ?? "stop" },
  };
}

/** A run would cross (or has crossed) one of its budget's hard limits. */
export class BudgetExceededError extends CairnError {
  readonly nonRetryable = true;
  constructor(
    /** Which limit, e.g. `maxCostUsd` or `maxTokens.output`. */
    readonly limit: string,
    /** The limit's value (USD for money). */
    readonly allowed: number,
    /** What the run had spent, and what the refused call would have added (estimated). */
    readonly totals: AgentTotals,
    readonly wouldAdd: number | null,
  ) {
    super(
      "BUDGET_EXCEEDED",
      `Budget limit ${limit} = ${allowed} reached: the run has spent $${(totals.costMicros / 1e6).toFixed(6)}${totals.possiblyBilledMicros ? ` (plus $${(totals.possiblyBilledMicros / 1e6).toFixed(6)} possibly billed for calls interrupted mid-flight)` : ""} over ${totals.steps} model calls and ${totals.toolCalls} tool calls` +
        ` (${totals.usage.inputTokens + totals.usage.cacheReadTokens + totals.usage.cacheWriteTokens} prompt and ${totals.usage.outputTokens} output tokens)` +
        `${wouldAdd === null ? "" : `, and the next call would add up to ${wouldAdd}`}. Raise the limit, or start a new run with what this one produced.`,
    );
  }
}

/** All-zero totals. */
export function emptyTotals(): AgentTotals {
  return { usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 }, costMicros: 0, steps: 0, toolCalls: 0 };
}

/**
 * Totals plus one model call's usage and cost (`null`: the model has no price), and what earlier
 * sends of the same call may have been billed.
 */
export function addCall(totals: AgentTotals, usage: Usage, costMicros: number | null, possiblyBilledMicros = 0): AgentTotals {
  const sum: AgentTotals = {
    usage: {
      inputTokens: totals.usage.inputTokens + usage.inputTokens,
      outputTokens: totals.usage.outputTokens + usage.outputTokens,
      cacheReadTokens: totals.usage.cacheReadTokens + usage.cacheReadTokens,
      cacheWriteTokens: totals.usage.cacheWriteTokens + usage.cacheWriteTokens,
      reasoningTokens: totals.usage.reasoningTokens + usage.reasoningTokens,
    },
    costMicros: totals.costMicros + (costMicros ?? 0),
    steps: totals.steps + 1,
    toolCalls: totals.toolCalls,
  };
  const billed = (totals.possiblyBilledMicros ?? 0) + possiblyBilledMicros;
  if (billed > 0 || totals.possiblyBilledMicros !== undefined) sum.possiblyBilledMicros = billed;
  const unpriced = (totals.unpricedCalls ?? 0) + (costMicros === null ? 1 : 0);
  if (unpriced > 0) sum.unpricedCalls = unpriced;
  return sum;
}

/** Totals of a run plus those of a child run. */
export function addTotals(a: AgentTotals, b: AgentTotals): AgentTotals {
  const sum = addCall(a, b.usage, b.costMicros, b.possiblyBilledMicros ?? 0);
  const unpriced = (a.unpricedCalls ?? 0) + (b.unpricedCalls ?? 0);
  const out: AgentTotals = { ...sum, steps: a.steps + b.steps, toolCalls: a.toolCalls + b.toolCalls };
  if (unpriced > 0) out.unpricedCalls = unpriced;
  else delete out.unpricedCalls;
  return out;
}

/**
 * Refuses the next model call when it could cross a hard limit: cost (with the call's worst-case
 * estimate), tokens (with its estimated prompt and maximum output), steps, and wall time.
 */
export function checkBeforeCall(
  budget: ResolvedBudget,
  totals: AgentTotals,
  next: { costMicros: number; inputTokens: number; maxOutputTokens: number },
  elapsedMs: number,
): void {
  if (budget.maxSteps !== null && totals.steps + 1 > budget.maxSteps) throw new BudgetExceededError("maxSteps", budget.maxSteps, totals, 1);
  if (budget.maxCostMicros !== null && spentMicros(totals) + next.costMicros > budget.maxCostMicros) {
    throw new BudgetExceededError("maxCostUsd", budget.maxCostMicros / 1e6, totals, next.costMicros / 1e6);
  }
  if (budget.maxWallTimeMs !== null && elapsedMs > budget.maxWallTimeMs) throw new BudgetExceededError("maxWallTime (ms)", budget.maxWallTimeMs, totals, null);
  const u = totals.usage;
  const prompt = u.inputTokens + u.cacheReadTokens + u.cacheWriteTokens;
  const checks: [keyof ResolvedBudget["maxTokens"], number, number][] = [
    ["input", prompt, next.inputTokens],
    ["output", u.outputTokens, next.maxOutputTokens],
    ["cacheRead", u.cacheReadTokens, 0],
    ["cacheWrite", u.cacheWriteTokens, 0],
    ["reasoning", u.reasoningTokens, 0],
    ["total", prompt + u.outputTokens, next.inputTokens + next.maxOutputTokens],
  ];
  for (const [kind, spent, adds] of checks) {
    const max = budget.maxTokens[kind];
    if (max !== undefined && spent + adds > max) throw new BudgetExceededError(`maxTokens.${kind}`, max, totals, adds);
  }
}

/** Tool calls beyond the ceiling stop the run. */
export function checkToolCalls(budget: ResolvedBudget, totals: AgentTotals, calls: number): void {
  if (budget.maxToolCalls !== null && totals.toolCalls + calls > budget.maxToolCalls) {
    throw new BudgetExceededError("maxToolCalls", budget.maxToolCalls, totals, calls);
  }
}

/** The index of the tier the next call could enter (beyond those approved), or -1. */
export function tierToEnter(budget: ResolvedBudget, totals: AgentTotals, nextCostMicros: number, approvedTiers: number): number {
  const tier = budget.tiersMicros[approvedTiers];
  return tier !== undefined && spentMicros(totals) + nextCostMicros > tier ? approvedTiers : -1;
}
