import type { ApiJournalEntry } from "cairn/client";

// A small reader of agent runs' journals (src/agent/agent.ts): each model call is a step
// `…turn#0/<i>/model#0`, each tool call a step `…turn#0/<i>/tool-<callId>#0`, and the loop's
// `loop.snapshot` / `loop.completed` entries carry `{ messages, totals }`. Kept here rather than
// importing cairn/agent so the dashboard bundle holds no agent runtime.

export interface TextBlock {
  type: "text";
  text: string;
}
export interface ToolUseBlock {
  type: "tool_use";
  id: string;
  name: string;
  input: unknown;
}
export interface ToolResultBlock {
  type: "tool_result";
  toolUseId: string;
  content: string;
  isError?: boolean;
}
export type Block = TextBlock | ToolUseBlock | ToolResultBlock | { type: "thinking"; thinking?: string } | { type: string };
export type Message = { role: "user"; content: string | TextBlock[] } | { role: "assistant"; content: Block[] } | { role: "tool"; content: ToolResultBlock[] };

export interface Usage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  reasoningTokens: number;
}

export interface AgentTotals {
  usage: Usage;
  costMicros: number;
  /** Model calls. */
  steps: number;
  toolCalls: number;
}

const MODEL_KEY = /\/model#0$/;
const TOOL_KEY = /\/tool-([^/]+)#\d+$/;

/** An agent run: a model call step, or a loop named "turn". */
export function isAgentRun(entries: readonly ApiJournalEntry[]): boolean {
  return entries.some((entry) => entry.opKey !== null && (MODEL_KEY.test(entry.opKey) || /(^|\/)turn#\d+$/.test(entry.opKey)));
}

export function isToolOp(opKey: string | null): boolean {
  return opKey !== null && TOOL_KEY.test(opKey);
}

function zeroUsage(): Usage {
  return { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 };
}

function num(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) ? value : 0;
}

function readTotals(value: unknown): AgentTotals | undefined {
  if (!value || typeof value !== "object") return undefined;
  const t = value as Record<string, unknown>;
  if (!t.usage || typeof t.usage !== "object") return undefined;
  const u = t.usage as Record<string, unknown>;
  return {
    usage: {
      inputTokens: num(u.inputTokens),
      outputTokens: num(u.outputTokens),
      cacheReadTokens: num(u.cacheReadTokens),
      cacheWriteTokens: num(u.cacheWriteTokens),
      reasoningTokens: num(u.reasoningTokens),
    },
    costMicros: num(t.costMicros),
    steps: num(t.steps),
    toolCalls: num(t.toolCalls),
  };
}

/** The run's budget limits, as the agent journals them with its manifest (src/agent/manifest.ts). */
export interface BudgetLimits {
  maxCostMicros: number | null;
  maxTokens: Record<string, number>;
  maxSteps: number | null;
  maxToolCalls: number | null;
  maxWallTimeMs: number | null;
  tiersMicros: number[];
}

/** The limits in the agent's journaled manifest (`manifest#0`), when it recorded them. */
export function budgetLimits(entries: readonly ApiJournalEntry[]): BudgetLimits | undefined {
  const entry = entries.find((e) => e.kind === "step.completed" && e.opKey === "manifest#0");
  const budget = (entry?.data as { result?: { budget?: Partial<BudgetLimits> } } | undefined)?.result?.budget;
  if (!budget || typeof budget !== "object") return undefined;
  const limit = (value: unknown) => (typeof value === "number" && Number.isFinite(value) ? value : null);
  const maxTokens: Record<string, number> = {};
  for (const [kind, value] of Object.entries(budget.maxTokens ?? {})) if (typeof value === "number") maxTokens[kind] = value;
  return {
    maxCostMicros: limit(budget.maxCostMicros),
    maxTokens,
    maxSteps: limit(budget.maxSteps),
    maxToolCalls: limit(budget.maxToolCalls),
    maxWallTimeMs: limit(budget.maxWallTimeMs),
    tiersMicros: Array.isArray(budget.tiersMicros) ? budget.tiersMicros.filter((t): t is number => typeof t === "number") : [],
  };
}

export interface AgentView {
  /** The conversation as of the newest loop state, then the model calls and tool results journaled after it. */
  messages: Message[];
  /** From the newest loop state when it is at least as recent as the journal's own fold; else the fold. */
  totals: AgentTotals;
  /** Where the totals come from. */
  totalsFrom: "loop state" | "journal";
  /** The budget's limits, when the agent journaled them. */
  limits?: BudgetLimits;
}

/**
 * The transcript and totals of an agent run. The newest `loop.completed` / `loop.snapshot` gives the
 * messages and totals up to it; model call results (assistant messages) and tool step outcomes
 * (tool results) after it are appended, so a running agent's transcript is current. Before the
 * first loop state, the conversation starts with the run's `input` (its prompt or messages), as the agent's does.
 */
export function agentView(entries: readonly ApiJournalEntry[], input?: unknown): AgentView {
  let base = -1;
  let messages: Message[] = [];
  let stateTotals: AgentTotals | undefined;
  for (let i = entries.length - 1; i >= 0; i--) {
    const entry = entries[i]!;
    if (entry.kind !== "loop.snapshot" && entry.kind !== "loop.completed") continue;
    const data = entry.data as { state?: unknown; result?: unknown };
    const state = (entry.kind === "loop.snapshot" ? data.state : data.result) as { messages?: unknown; totals?: unknown } | null | undefined;
    if (!state || typeof state !== "object" || !Array.isArray(state.messages)) continue;
    base = i;
    messages = state.messages as Message[];
    stateTotals = readTotals(state.totals);
    break;
  }
  if (base === -1) messages = initialMessages(input);

  // The journal's own fold over every model call and tool call (also what follows the base).
  const fold: AgentTotals = { usage: zeroUsage(), costMicros: 0, steps: 0, toolCalls: 0 };
  const after: AgentTotals = { usage: zeroUsage(), costMicros: 0, steps: 0, toolCalls: 0 };
  const tail: Message[] = [];
  const toolCalls = new Map<string, string>();
  entries.forEach((entry, i) => {
    if (!entry.opKey) return;
    const isModel = MODEL_KEY.test(entry.opKey);
    const toolMatch = TOOL_KEY.exec(entry.opKey);
    if (entry.kind === "step.started" && toolMatch) {
      const intent = (entry.data as { intent?: { toolCallId?: string } }).intent;
      toolCalls.set(entry.opKey, intent?.toolCallId ?? toolMatch[1]!);
    }
    const targets = i > base ? [fold, after] : [fold];
    if (entry.kind === "step.completed" && isModel) {
      const result = (entry.data as { result?: { content?: unknown; usage?: Record<string, unknown>; costMicros?: unknown } }).result;
      for (const t of targets) {
        t.steps++;
        t.costMicros += num(result?.costMicros);
        for (const key of Object.keys(t.usage) as (keyof Usage)[]) t.usage[key] += num(result?.usage?.[key]);
      }
      if (i > base && Array.isArray(result?.content)) tail.push({ role: "assistant", content: result.content as Block[] });
    } else if (toolMatch && (entry.kind === "step.completed" || (entry.kind === "step.failed" && (entry.data as { final?: boolean }).final))) {
      for (const t of targets) t.toolCalls++;
      if (i > base) {
        const data = entry.data as { result?: unknown; error?: { message?: string } };
        const content =
          entry.kind === "step.completed"
            ? typeof data.result === "string"
              ? data.result
              : JSON.stringify(data.result)
            : `failed: ${data.error?.message ?? ""}`;
        const block: ToolResultBlock = {
          type: "tool_result",
          toolUseId: toolCalls.get(entry.opKey) ?? toolMatch[1]!,
          content: content ?? "",
          ...(entry.kind === "step.failed" ? { isError: true } : {}),
        };
        const last = tail.at(-1);
        if (last?.role === "tool") last.content.push(block);
        else tail.push({ role: "tool", content: [block] });
      }
    }
  });

  if (stateTotals) {
    const totals: AgentTotals = {
      usage: { ...stateTotals.usage },
      costMicros: stateTotals.costMicros + after.costMicros,
      steps: stateTotals.steps + after.steps,
      toolCalls: stateTotals.toolCalls + after.toolCalls,
    };
    for (const key of Object.keys(totals.usage) as (keyof Usage)[]) totals.usage[key] += after.usage[key];
    return withLimits({ messages: [...messages, ...tail], totals, totalsFrom: "loop state" }, entries);
  }
  return withLimits({ messages: [...messages, ...tail], totals: fold, totalsFrom: "journal" }, entries);
}

/** The conversation an agent starts from its input (src/agent/agent.ts `initialMessages`): a prompt, or messages. */
function initialMessages(input: unknown): Message[] {
  if (!input || typeof input !== "object") return [];
  const i = input as { prompt?: unknown; messages?: unknown };
  if (typeof i.prompt === "string" && i.prompt !== "") return [{ role: "user", content: i.prompt }];
  if (Array.isArray(i.messages)) return i.messages.filter((m): m is Message => !!m && typeof m === "object" && "role" in m && "content" in m);
  return [];
}

function withLimits(view: AgentView, entries: readonly ApiJournalEntry[]): AgentView {
  const limits = budgetLimits(entries);
  return limits ? { ...view, limits } : view;
}

/** One gauge of spend against a limit. */
export interface Gauge {
  key: string;
  label: string;
  spent: number;
  limit: number;
}

/** Spend against each limit the budget sets (cost, tokens, model calls, tool calls). */
export function budgetGauges(view: AgentView, possiblyBilledMicros = 0): Gauge[] {
  const limits = view.limits;
  if (!limits) return [];
  const { usage } = view.totals;
  const gauges: Gauge[] = [];
  // Possibly billed sends count against the cost limit, as the budget charges them (worst case).
  if (limits.maxCostMicros !== null)
    gauges.push({ key: "cost", label: "cost", spent: view.totals.costMicros + possiblyBilledMicros, limit: limits.maxCostMicros });
  const tokens: Record<string, number> = {
    input: usage.inputTokens,
    output: usage.outputTokens,
    cacheRead: usage.cacheReadTokens,
    cacheWrite: usage.cacheWriteTokens,
    reasoning: usage.reasoningTokens,
    total: usage.inputTokens + usage.outputTokens + usage.cacheReadTokens + usage.cacheWriteTokens + usage.reasoningTokens,
  };
  for (const [kind, limit] of Object.entries(limits.maxTokens)) {
    if (kind in tokens) gauges.push({ key: `tokens-${kind}`, label: `${kind} tokens`, spent: tokens[kind]!, limit });
  }
  if (limits.maxSteps !== null) gauges.push({ key: "steps", label: "model calls", spent: view.totals.steps, limit: limits.maxSteps });
  if (limits.maxToolCalls !== null) gauges.push({ key: "tool-calls", label: "tool calls", spent: view.totals.toolCalls, limit: limits.maxToolCalls });
  return gauges;
}

// ── plans (a reader of what src/agent/plan-view.ts rebuilds) ──────────────────

export type PlanNodeStatus = "pending" | "running" | "done" | "failed" | "skipped";
export interface PlanNode {
  id: string;
  deps: string[];
  kind: string;
  workflow?: string;
  label?: string;
  status: PlanNodeStatus;
  result?: unknown;
  error?: { message?: string };
  /** Step attempts started (a child node: 1 once started). */
  attempts: number;
  /** When its op first started and when it ended (epoch ms), from the journal. */
  startedAt?: number;
  endedAt?: number;
  /** A skipped node: the failed node it waited on (directly or through other skipped nodes). */
  skippedBecause?: string;
  /** The plan tool's note on the node (from the model's create or revise call), if any. */
  note?: string;
}
export interface PlanView {
  name: string;
  opKey: string;
  nodes: PlanNode[];
  revision: number;
}

const NODE_KEY = /(?:^|\/)plan-([a-zA-Z0-9_-]+):([a-zA-Z0-9_-]+)#\d+$/;

/** Plans of a run: created by a bookkeeping step, revised (remove / add / order), nodes' ops followed. */
export function planViews(entries: readonly ApiJournalEntry[]): PlanView[] {
  const views: PlanView[] = [];
  const latest = new Map<string, PlanView>();
  const pending = new Map<string, { cairnPlan: string; action: string }>();
  for (const entry of entries) {
    const key = entry.opKey;
    if (key === null) continue;
    if (entry.kind === "step.started") {
      const intent = (entry.data as { intent?: { cairnPlan?: unknown; action?: unknown } }).intent;
      if (intent && typeof intent.cairnPlan === "string" && (intent.action === "create" || intent.action === "revise")) {
        pending.set(key, { cairnPlan: intent.cairnPlan, action: intent.action });
        continue;
      }
    }
    const bookkeeping = pending.get(key);
    if (bookkeeping && entry.kind === "step.completed") {
      pending.delete(key);
      const result = (entry.data as { result?: unknown }).result as { nodes?: PlanNode[]; add?: PlanNode[]; remove?: string[]; order?: string[] } | null;
      if (bookkeeping.action === "create") {
        if (!Array.isArray(result?.nodes)) continue;
        const view: PlanView = {
          name: bookkeeping.cairnPlan,
          opKey: key,
          nodes: result.nodes.map((n) => ({ ...n, deps: [...(n.deps ?? [])], status: "pending", attempts: 0 })),
          revision: 0,
        };
        views.push(view);
        latest.set(view.name, view);
      } else {
        const view = latest.get(bookkeeping.cairnPlan);
        if (!view || !result) continue;
        const removed = new Set(result.remove ?? []);
        let nodes = view.nodes.filter((n) => !removed.has(n.id));
        nodes = [...nodes, ...(result.add ?? []).map((n) => ({ ...n, deps: [...(n.deps ?? [])], status: "pending" as const, attempts: 0 }))];
        if (result.order?.length) {
          const slots = nodes.flatMap((n, i) => (result.order!.includes(n.id) ? [i] : []));
          const byId = new Map(nodes.map((n) => [n.id, n]));
          const reordered = [...nodes];
          result.order.forEach((id, k) => {
            const node = byId.get(id);
            if (node && slots[k] !== undefined) reordered[slots[k]!] = node;
          });
          nodes = reordered;
        }
        view.nodes = nodes;
        view.revision++;
      }
      continue;
    }
    const match = NODE_KEY.exec(key);
    if (!match) continue;
    const view = latest.get(match[1]!);
    const node = view?.nodes.find((n) => n.id === match[2]);
    if (!view || !node) continue;
    const data = entry.data as { result?: unknown; output?: unknown; final?: boolean; error?: { message?: string } };
    const at = Date.parse(entry.at);
    if (entry.kind === "step.started" || entry.kind === "child.started") {
      if (node.status !== "done") node.status = "running";
      node.attempts += 1;
      node.startedAt ??= at;
    } else if (entry.kind === "step.completed" || entry.kind === "child.completed") {
      node.status = "done";
      node.result = entry.kind === "step.completed" ? data.result : data.output;
      node.endedAt = at;
    } else if ((entry.kind === "step.failed" && data.final) || entry.kind === "child.failed") {
      node.status = "failed";
      node.endedAt = at;
      if (data.error) node.error = data.error;
      skipDependents(view);
    }
  }
  addNotes(entries, views);
  return views;
}

/**
 * The plan tool's notes (src/agent/plan-tool.ts): `note` on a node of a create or revise call, and
 * revise's `notes` by id, read from the model's journaled tool calls, the newest winning.
 */
function addNotes(entries: readonly ApiJournalEntry[], views: PlanView[]): void {
  if (views.length === 0) return;
  const notes = new Map<string, string>();
  for (const entry of entries) {
    if (entry.kind !== "step.completed" || entry.opKey === null || !MODEL_KEY.test(entry.opKey)) continue;
    const content = (entry.data as { result?: { content?: unknown } }).result?.content;
    if (!Array.isArray(content)) continue;
    for (const block of content as { type?: unknown; input?: unknown }[]) {
      if (block.type !== "tool_use" || !block.input || typeof block.input !== "object") continue;
      const input = block.input as { action?: unknown; nodes?: unknown; notes?: unknown };
      if (input.action !== "create" && input.action !== "revise") continue;
      if (Array.isArray(input.nodes))
        for (const node of input.nodes as { id?: unknown; note?: unknown }[])
          if (typeof node?.id === "string" && typeof node.note === "string") notes.set(node.id, node.note);
      if (input.notes && typeof input.notes === "object")
        for (const [id, note] of Object.entries(input.notes as Record<string, unknown>)) if (typeof note === "string") notes.set(id, note);
    }
  }
  const last = views.at(-1)!;
  for (const node of last.nodes) {
    const note = notes.get(node.id);
    if (note !== undefined) node.note = note;
  }
}

function skipDependents(view: PlanView): void {
  const byId = new Map(view.nodes.map((n) => [n.id, n]));
  let changed = true;
  while (changed) {
    changed = false;
    for (const node of view.nodes) {
      if (node.status !== "pending") continue;
      const blocker = node.deps.map((dep) => byId.get(dep)).find((dep) => dep?.status === "failed" || dep?.status === "skipped");
      if (blocker) {
        node.status = "skipped";
        node.skippedBecause = blocker.status === "failed" ? blocker.id : (blocker.skippedBecause ?? blocker.id);
        changed = true;
      }
    }
  }
}

/** Spend beyond the journaled calls' cost (src/agent/transcript-view.ts folds it the same way). */
export interface ExtraSpend {
  /** Estimated micro-dollars of sends that never got a journaled response (a worker died mid-call): the provider may have billed them. */
  possiblyBilledMicros: number;
  /** Sends counted in `possiblyBilledMicros`. */
  unconfirmedSends: number;
  /** Journaled calls of a model without a price: their cost is unknown, not $0. */
  unpricedCalls: number;
  /** Calls in flight now (or interrupted, if the run is not running), and their estimated cost. */
  inFlightCalls: number;
  inFlightMicros: number;
}

const ANY_MODEL_KEY = /(?:^|\/)(model|summarize)#\d+$/;

/** Folds the journal for spend the totals do not show: possibly billed sends, unpriced calls, calls in flight. */
export function extraSpend(entries: readonly ApiJournalEntry[]): ExtraSpend {
  const spend: ExtraSpend = { possiblyBilledMicros: 0, unconfirmedSends: 0, unpricedCalls: 0, inFlightCalls: 0, inFlightMicros: 0 };
  const estimates = new Map<string, number>();
  const reruns = new Map<string, number>();
  const open = new Set<string>();
  const unconfirmed = (key: string) => {
    const sends = reruns.get(key) ?? 0;
    spend.unconfirmedSends += sends;
    spend.possiblyBilledMicros += sends * (estimates.get(key) ?? 0);
  };
  for (const entry of entries) {
    const key = entry.opKey;
    if (key === null || !ANY_MODEL_KEY.test(key)) continue;
    const data = entry.data as Record<string, any> | null;
    if (entry.kind === "step.started") {
      estimates.set(key, num(data?.intent?.estimatedCostMicros));
      open.add(key);
    } else if (entry.kind === "step.reconciled" && data?.action === "rerun") {
      reruns.set(key, (reruns.get(key) ?? 0) + 1);
    } else if (entry.kind === "step.completed") {
      open.delete(key);
      const result = data?.result as { costMicros?: unknown; possiblyBilledMicros?: unknown; halted?: unknown } | null | undefined;
      spend.possiblyBilledMicros += num(result?.possiblyBilledMicros);
      if (result && !result.halted && typeof result.costMicros !== "number") spend.unpricedCalls += 1;
      reruns.delete(key);
    } else if (entry.kind === "step.failed" && data?.final) {
      open.delete(key);
      unconfirmed(key);
      reruns.delete(key);
    }
  }
  for (const key of open) {
    unconfirmed(key);
    spend.inFlightCalls += 1;
    spend.inFlightMicros += estimates.get(key) ?? 0;
  }
  return spend;
}
