import type { EntryData, HumanAnswer } from "../core/journal.js";
import type { JournalEntryView } from "../engine/engine.js";
import type { BudgetLimits } from "./manifest.js";
import type { ContentBlock, Message, Usage } from "./model/schemas.js";

/** One line of an agent run's transcript, as the journal shows it. */
export type TranscriptItem =
  | { kind: "user"; text: string }
  | { kind: "assistant"; text: string }
  | { kind: "tool-call"; callId: string; name: string; arguments: unknown }
  /** A provider-hosted tool (web search, code interpreter…) the provider ran itself: its call, result, or both. */
  | { kind: "hosted-tool"; name: string; id?: string; phase: string; input?: unknown; output?: unknown }
  | { kind: "tool-result"; callId: string; name: string; idempotencyKey?: string; result?: unknown; error?: string; via?: string }
  | { kind: "approval"; tool: string; callId: string; answer?: HumanAnswer }
  | { kind: "question"; requestId: string; question: string; context?: unknown; answer?: HumanAnswer }
  | { kind: "summary"; text: string }
  /** A fallback model answered after `from` failed for good with a provider outage (`error`). */
  | { kind: "fallback"; from: string; to: string; error: string };

/** What an agent run has spent so far: a fold of its journal, also while it runs. */
export interface AgentSpend {
  usage: Usage;
  /** Model and summary calls with a journaled response. */
  modelCalls: number;
  toolCalls: number;
  /** Micro-dollars of journaled calls with a price. */
  costMicros: number;
  /** Calls whose model has no price: cost unknown. */
  unpricedCalls: number;
  /** Estimated micro-dollars of sends that never got a journaled response (worker died mid-call). */
  possiblyBilledMicros: number;
  /** Sends counted in `possiblyBilledMicros`. */
  unconfirmedSends: number;
  /** Estimated micro-dollars of a call in flight now (or interrupted, if the run is not running). */
  inFlightMicros: number;
  inFlightCalls: number;
  /** The limits journaled with the run's manifest, when any. */
  limits?: BudgetLimits;
}

/** An agent run's transcript and spend. `isAgent` is false for a run of any other workflow. */
export interface AgentRunView {
  isAgent: boolean;
  items: TranscriptItem[];
  spend: AgentSpend;
}

const MODEL_KEY = /(?:^|\/)(model|summarize)#\d+$/;
const TOOL_KEY = /\/tool-[^/]+#\d+$/;
const APPROVAL_KEY = /\/approve-[^/]+#\d+$/;

/**
 * Rebuilds an agent run's transcript (user prompt, assistant text, tool calls with their names,
 * arguments and results, approvals, questions, summaries) and its spend from the journal, in journal
 * order. Works on a running run: calls without an outcome yet count as in flight.
 */
export function agentRunView(entries: readonly JournalEntryView[]): AgentRunView {
  const items: TranscriptItem[] = [];
  const spend: AgentSpend = {
    usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 },
    modelCalls: 0,
    toolCalls: 0,
    costMicros: 0,
    unpricedCalls: 0,
    possiblyBilledMicros: 0,
    unconfirmedSends: 0,
    inFlightMicros: 0,
    inFlightCalls: 0,
  };
  let isAgent = false;
  const intents = new Map<string, Record<string, unknown>>();
  const reruns = new Map<string, number>();
  const open = new Set<string>();
  const questions = new Map<string, TranscriptItem & { kind: "approval" | "question" }>();
  for (const entry of entries) {
    const key = entry.opKey ?? "";
    switch (entry.kind) {
      case "run.created": {
        const input = (entry.data as EntryData["run.created"]).input as { prompt?: unknown; messages?: Message[] } | null;
        if (typeof input?.prompt === "string") items.push({ kind: "user", text: input.prompt });
        else if (Array.isArray(input?.messages)) for (const message of input.messages) pushMessage(items, message);
        break;
      }
      case "step.started": {
        const data = entry.data as EntryData["step.started"];
        if (data.intent && typeof data.intent === "object") intents.set(key, data.intent as Record<string, unknown>);
        open.add(key);
        break;
      }
      case "step.reconciled":
        if ((entry.data as EntryData["step.reconciled"]).action === "rerun") reruns.set(key, (reruns.get(key) ?? 0) + 1);
        break;
      case "step.completed": {
        open.delete(key);
        const data = entry.data as EntryData["step.completed"];
        if (key === "manifest#0") {
          const manifest = data.result as { agent?: unknown; budget?: BudgetLimits } | null;
          if (manifest && typeof manifest.agent === "string") {
            isAgent = true;
            if (manifest.budget) spend.limits = manifest.budget;
          }
        } else if (MODEL_KEY.test(key)) addModelCall(items, spend, key, data.result);
        else if (TOOL_KEY.test(key)) {
          const intent = intents.get(key) ?? {};
          spend.toolCalls += 1;
          items.push({ ...toolRef(intent), result: data.result, ...(data.via ? { via: data.via } : {}) });
        }
        reruns.delete(key);
        break;
      }
      case "step.failed": {
        const data = entry.data as EntryData["step.failed"];
        if (!data.final) break;
        open.delete(key);
        if (TOOL_KEY.test(key)) items.push({ ...toolRef(intents.get(key) ?? {}), error: data.error.message });
        if (MODEL_KEY.test(key)) countUnconfirmed(spend, reruns.get(key) ?? 0, intents.get(key));
        reruns.delete(key);
        break;
      }
      case "human.requested": {
        const data = entry.data as EntryData["human.requested"];
        const context = data.context as Record<string, unknown> | undefined;
        const item: TranscriptItem & { kind: "approval" | "question" } = APPROVAL_KEY.test(key)
          ? { kind: "approval", tool: String(context?.tool ?? "?"), callId: String(context?.toolCallId ?? "?") }
          : { kind: "question", requestId: data.requestId, question: data.question, ...(data.context === undefined ? {} : { context: data.context }) };
        questions.set(data.requestId, item);
        items.push(item);
        break;
      }
      case "human.answered": {
        const data = entry.data as EntryData["human.answered"];
        const item = questions.get(data.requestId);
        if (item) item.answer = data.answer;
        break;
      }
    }
  }
  // Calls still without an outcome: sends interrupted earlier are possibly billed, the latest is in flight.
  for (const key of open) {
    if (!MODEL_KEY.test(key)) continue;
    const estimate = numberOr(intents.get(key)?.estimatedCostMicros, 0);
    countUnconfirmed(spend, reruns.get(key) ?? 0, intents.get(key));
    spend.inFlightCalls += 1;
    spend.inFlightMicros += estimate;
  }
  return { isAgent, items, spend };
}

function addModelCall(items: TranscriptItem[], spend: AgentSpend, key: string, result: unknown): void {
  const call = result as {
    content?: ContentBlock[];
    usage?: Usage;
    costMicros?: number | null;
    possiblyBilledMicros?: number;
    halted?: string;
    answeredBy?: string;
    fallbackFrom?: { model: string; error: string }[];
  } | null;
  if (!call || typeof call !== "object") return;
  if (call.possiblyBilledMicros) spend.possiblyBilledMicros += call.possiblyBilledMicros;
  if (call.halted) return; // the step refused to send again; a question or an error follows
  spend.modelCalls += 1;
  if (call.usage) for (const field of Object.keys(spend.usage) as (keyof Usage)[]) spend.usage[field] += numberOr(call.usage[field], 0);
  if (typeof call.costMicros === "number") spend.costMicros += call.costMicros;
  else spend.unpricedCalls += 1;
  if (Array.isArray(call.fallbackFrom))
    for (const failed of call.fallbackFrom)
      items.push({ kind: "fallback", from: String(failed.model), to: String(call.answeredBy ?? "?"), error: String(failed.error) });
  const content = Array.isArray(call.content) ? call.content : [];
  if (/(?:^|\/)summarize#\d+$/.test(key)) {
    items.push({ kind: "summary", text: textOfBlocks(content) });
    return;
  }
  for (const block of content) {
    if (block.type === "text" && block.text.trim() !== "") items.push({ kind: "assistant", text: block.text });
    if (block.type === "tool_use") items.push({ kind: "tool-call", callId: block.id, name: block.name, arguments: block.input });
    if (block.type === "hosted_tool")
      items.push({
        kind: "hosted-tool",
        name: block.name,
        phase: block.phase,
        ...(block.id === undefined ? {} : { id: block.id }),
        ...(block.input === undefined ? {} : { input: block.input }),
        ...(block.output === undefined ? {} : { output: block.output }),
      });
  }
}

function countUnconfirmed(spend: AgentSpend, sends: number, intent: Record<string, unknown> | undefined): void {
  if (sends === 0) return;
  spend.unconfirmedSends += sends;
  spend.possiblyBilledMicros += sends * numberOr(intent?.estimatedCostMicros, 0);
}

function toolRef(intent: Record<string, unknown>): TranscriptItem & { kind: "tool-result" } {
  return {
    kind: "tool-result",
    callId: String(intent.toolCallId ?? "?"),
    name: String(intent.tool ?? "?"),
    ...(typeof intent.idempotencyKey === "string" ? { idempotencyKey: intent.idempotencyKey } : {}),
  };
}

function pushMessage(items: TranscriptItem[], message: Message): void {
  const text = typeof message.content === "string" ? message.content : textOfBlocks(message.content as ContentBlock[]);
  if (message.role === "user") items.push({ kind: "user", text });
  else if (message.role === "assistant") items.push({ kind: "assistant", text });
}

function textOfBlocks(blocks: readonly ContentBlock[]): string {
  return blocks
    .filter((block): block is ContentBlock & { type: "text"; text: string } => block.type === "text")
    .map((block) => block.text)
    .join("");
}

function numberOr(value: unknown, fallback: number): number {
  return typeof value === "number" && Number.isFinite(value) ? value : fallback;
}
