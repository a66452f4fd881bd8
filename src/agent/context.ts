import { createHash } from "node:crypto";
import { ValidationError } from "../core/errors.js";
import type { WorkflowContext } from "../engine/workflow.js";
import { addCall, type AgentTotals, type ResolvedBudget } from "./budget.js";
import { callModel, type ModelCandidate, type UnconfirmedCallsOptions } from "./model-call.js";
import type { CostOptions } from "./model/cost.js";
import { estimateTokens } from "./model/estimate.js";
import { knownEstimate } from "./spend.js";
import { textOf } from "./model/messages.js";
import type { Model, ModelRequest } from "./model/model.js";
import type { Message, ToolSpec, UserBlock } from "./model/schemas.js";

/** How an agent keeps its prompt within the model's window. */
export interface ContextOptions {
  /** The model's context window in tokens. Default 200,000. */
  windowTokens?: number;
  /** Summarize when the estimated prompt passes this share of the window. Default 0.75. */
  summarizeAt?: number;
  /** Messages kept verbatim at the end of the transcript (at least; the cut moves back to a turn boundary). Default 6. */
  keepRecent?: number;
  /** The model that writes summaries. Default: the agent's model. */
  summaryModel?: Model;
  /** Instructions for the summary. */
  summaryPrompt?: string;
  /** Max tokens of a summary. Default 1024. */
  summaryMaxTokens?: number;
}

/** Options checked once. */
export interface ResolvedContext {
  windowTokens: number;
  summarizeAt: number;
  keepRecent: number;
  summaryModel: Model | null;
  summaryPrompt: string;
  summaryMaxTokens: number;
}

const DEFAULT_SUMMARY_PROMPT =
  "You compress an agent's working history. Summarize the conversation below so the agent can continue without it: " +
  "the goal, decisions made, facts learned (with their sources), tool calls made and their results, and what remains to do. Be concise and exact.";

/** Validates context options; throws ValidationError naming the bad field. */
export function resolveContext(agent: string, options: ContextOptions = {}): ResolvedContext {
  const windowTokens = options.windowTokens ?? 200_000;
  const summarizeAt = options.summarizeAt ?? 0.75;
  const keepRecent = options.keepRecent ?? 6;
  const summaryMaxTokens = options.summaryMaxTokens ?? 1024;
  if (!Number.isSafeInteger(windowTokens) || windowTokens < 1_000)
    throw new ValidationError(`Agent "${agent}": context.windowTokens must be a whole number ≥ 1000.`);
  if (!(summarizeAt > 0 && summarizeAt < 1)) throw new ValidationError(`Agent "${agent}": context.summarizeAt is a share of the window, between 0 and 1.`);
  if (!Number.isSafeInteger(keepRecent) || keepRecent < 1) throw new ValidationError(`Agent "${agent}": context.keepRecent must be a whole number ≥ 1.`);
  if (!Number.isSafeInteger(summaryMaxTokens) || summaryMaxTokens < 1)
    throw new ValidationError(`Agent "${agent}": context.summaryMaxTokens must be a positive whole number.`);
  return {
    windowTokens,
    summarizeAt,
    keepRecent,
    summaryModel: options.summaryModel ?? null,
    summaryPrompt: options.summaryPrompt ?? DEFAULT_SUMMARY_PROMPT,
    summaryMaxTokens,
  };
}

/** The part of the loop state compaction reads and rewrites. */
export interface CompactableState {
  messages: Message[];
  totals: AgentTotals;
  summaries: number;
}

/**
 * Where the transcript can be cut: the kept part must start with an assistant turn, so that after the
 * summary (a user message) every tool result still follows the call that asked for it. Returns the
 * index of the first kept message, or -1 when no cut leaves `keepRecent` messages and summarizes something.
 */
export function cutIndex(messages: Message[], keepRecent: number): number {
  for (let i = messages.length - keepRecent; i >= 1; i--) if (messages[i]?.role === "assistant") return i;
  return -1;
}

/** A user block as summary text: images and files are named, not sent again (the summary model may not read them). */
function describeUserBlock(block: UserBlock): string {
  if (block.type === "text") return block.text;
  const where = block.source.type === "url" ? ` ${block.source.url}` : block.source.type === "file_id" ? ` ${block.source.fileId}` : "";
  return block.type === "image" ? `[image${where}]` : `[file ${block.filename ?? ""}${where}]`.replace("file ]", "file]");
}

/** The summarized messages as plain text: tool calls and results included, thinking left out. */
export function renderForSummary(messages: Message[]): string {
  return messages
    .map((message) => {
      if (message.role === "user") return `USER: ${typeof message.content === "string" ? message.content : message.content.map(describeUserBlock).join("\n")}`;
      if (message.role === "tool") return message.content.map((r) => `TOOL RESULT ${r.toolUseId}${r.isError ? " (error)" : ""}: ${r.content}`).join("\n");
      return message.content
        .map((block) => {
          if (block.type === "text") return `ASSISTANT: ${block.text}`;
          if (block.type === "tool_use") return `ASSISTANT CALLED ${block.name} (${block.id}) WITH ${JSON.stringify(block.input)}`;
          if (block.type === "hosted_tool")
            return `PROVIDER RAN ${block.name}${block.input === undefined ? "" : ` WITH ${JSON.stringify(block.input)}`}${block.output === undefined ? "" : ` → ${JSON.stringify(block.output).slice(0, 2000)}`}`;
          return "";
        })
        .filter(Boolean)
        .join("\n");
    })
    .join("\n\n");
}

/** How the summary call is sent: the same accounting as every model call of the agent. */
export interface SummaryCallOptions {
  budget: ResolvedBudget;
  unconfirmed: Required<UnconfirmedCallsOptions>;
  /** Models tried when the summary model fails with a provider outage (the agent's fallbacks when it has no summary model of its own). */
  fallbacks: Model[];
}

/**
 * Progressive summarization: when the estimated prompt passes `summarizeAt` of the window, the
 * older messages (an earlier summary included) are summarized by a model call — a journaled step
 * whose intent records the provenance (which messages, which model, which prompt) — and replaced by
 * one user message; the recent turns stay verbatim. The transcript stays valid for every provider.
 * `beforeCall` applies the budget to the summary call; `calls` gives it the agent's resend cap and
 * possibly-billed accounting (a summary sent again and again without a journaled response stops
 * being re-sent, like any model call) and its fallbacks.
 */
export async function compactIfNeeded<S extends CompactableState>(
  ctx: WorkflowContext,
  agentModel: Model,
  options: ResolvedContext,
  request: { system?: string | undefined; tools: ToolSpec[]; maxTokens: number },
  state: S,
  costOptions: CostOptions,
  beforeCall: (next: { costMicros: number; inputTokens: number; maxOutputTokens: number }) => void,
  calls: SummaryCallOptions,
): Promise<S> {
  const prompt: Omit<ModelRequest, "signal"> = { messages: state.messages, tools: request.tools, maxTokens: request.maxTokens };
  if (request.system !== undefined) prompt.system = request.system;
  const { inputTokens } = estimateTokens(prompt);
  if (inputTokens <= options.windowTokens * options.summarizeAt) return state;
  const cut = cutIndex(state.messages, options.keepRecent);
  if (cut < 0) return state;
  const model = options.summaryModel ?? agentModel;
  const older = state.messages.slice(0, cut);
  const summaryRequest: Omit<ModelRequest, "signal"> = {
    system: options.summaryPrompt,
    messages: [{ role: "user", content: renderForSummary(older) }],
    maxTokens: options.summaryMaxTokens,
  };
  const estimate = estimateTokens(summaryRequest);
  const estimatedCost = knownEstimate(model.modelId, summaryRequest, costOptions);
  beforeCall({ costMicros: estimatedCost ?? 0, ...estimate });
  const provenance = {
    summary: state.summaries + 1,
    messages: { from: 0, to: cut },
    model: model.modelId,
    promptHash: `sha256:${createHash("sha256").update(options.summaryPrompt).digest("hex")}`,
  };
  const fallbacks: ModelCandidate[] = calls.fallbacks.map((fallback) => ({
    model: fallback,
    estimatedCost: knownEstimate(fallback.modelId, summaryRequest, costOptions),
  }));
  const call = await callModel(ctx, {
    name: "summarize",
    model,
    request: summaryRequest,
    estimatedCost,
    fallbacks,
    costOptions,
    retry: { maxAttempts: 4, initialDelay: "2s" },
    budget: calls.budget,
    totals: state.totals,
    unconfirmed: calls.unconfirmed,
    seal: (response) => response,
    intent: provenance,
  });
  const summary: Message = { role: "user", content: `[Summary ${provenance.summary} of the earlier conversation]\n${textOf(call.content)}` };
  return {
    ...state,
    messages: [summary, ...state.messages.slice(cut)],
    totals: addCall(state.totals, call.usage, call.costMicros, call.possiblyBilledMicros ?? 0),
    summaries: provenance.summary,
  };
}
