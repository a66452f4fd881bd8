import type { StepFlowOptions } from "../core/step-flow.js";
import { z } from "zod";
import { ValidationError, isCairnError } from "../core/errors.js";
import { secret } from "../core/secret.js";
import { defineWorkflow } from "../engine/define-workflow.js";
import type { RetryPolicy, Workflow, WorkflowContext } from "../engine/workflow.js";
import {
  addCall,
  addTotals,
  checkBeforeCall,
  checkToolCalls,
  emptyTotals,
  resolveBudget,
  spentMicros,
  tierToEnter,
  BudgetExceededError,
  type AgentBudget,
  type AgentTotals,
  type ResolvedBudget,
} from "./budget.js";
import { MEMORY_TOOLS, memoryToolSpecs, resolveMemory, runMemoryTool, type Memory, type MemoryCall, type MemoryOptions } from "./memory.js";
import { diffManifests, makeManifest, ManifestChangedError, type AgentManifest, type BudgetLimits, type ManifestChange } from "./manifest.js";
import { compactIfNeeded, resolveContext, type ContextOptions } from "./context.js";
import type { CostOptions } from "./model/cost.js";
import { estimateTokens } from "./model/estimate.js";
import { callModel, type ModelCall, type UnconfirmedCallsOptions } from "./model-call.js";
import { knownEstimate, requirePrices } from "./spend.js";
import { textOf } from "./model/messages.js";
import type { Model, ModelRequest } from "./model/model.js";
import { ProviderToolsSchema, type JsonValue, type Message, type ProviderTools, type StopReason, type ToolResult, type ToolUseBlock } from "./model/schemas.js";
import { argumentsHash, defineTool, describeIssues, formatOutput, type Tool } from "./tool.js";
import { EMPTY_WINDOW, sealCalls, sealResults, Transcript, type WindowRef } from "./transcript-rows.js";
import type { ToolCallRecord } from "../core/journal.js";

/** What an agent run starts with: a prompt, or a whole conversation, and optionally tighter limits. */
export type AgentInput = ({ prompt: string } | { messages: Message[] }) & {
  /** Limits set by a parent agent (what is left of its own budget); the tighter of these and the agent's own apply. */
  limits?: { maxCostMicros?: number };
  /** Working memory to start with (e.g. what an earlier turn of a thread remembered). */
  memory?: Memory;
};

/** How an agent run ended. */
export interface AgentResult {
  /** The text of the final assistant turn. */
  text: string;
  /** The transcript as last sent to the model, plus the final turn (summaries replace older turns). */
  messages: Message[];
  stopReason: StopReason;
  totals: AgentTotals;
  /** The working memory at the end (empty without `memory` options). */
  memory: Memory;
  /** Turns taken (model calls in the loop, summaries excluded). */
  turns: number;
}

/** What {@link defineAgent} takes. */
export interface AgentDefinition {
  name: string;
  /** Default "1". Bump it when the system prompt, tools or loop change in a way old runs cannot replay. */
  version?: string;
  /** The model, or a function that makes it in the worker (e.g. from environment keys). */
  model: Model | (() => Model);
  /**
   * Models to try, in order, when a model call fails for good with a provider outage: a 5xx, 429,
   * 408 or 409 answer or a network failure, after the whole `retry` policy (each model gets all of
   * it). A rejected request (400, 401, 403, 404, 422) is not retried on another model. The journal
   * records which model answered (a replay or resume uses that answer and sends nothing), the call
   * is priced by the model that answered, and `cairn show` marks the turn as a fallback. Summary
   * calls fall back to the same list. Each may be a function, like `model`.
   * @example
   * fallbacks: [anthropicModel({ model: "claude-haiku-4-5" }), () => openaiModel({ model: "gpt-5-mini" })]
   */
  fallbacks?: (Model | (() => Model))[];
  system?: string;
  tools?: Tool[];
  /**
   * Provider-hosted tools (web search, file search, code interpreter…), by adapter, passed to the
   * provider as given; the provider runs them. Their calls and results come back as `hosted_tool`
   * blocks: journaled with the model step, shown by `cairn show`, and sent back verbatim on the next
   * turn. Each adapter sends only its own list, so fallbacks on other providers are not confused.
   * @example
   * providerTools: { openai: [{ type: "web_search" }], anthropic: [{ type: "web_search_20250305", name: "web_search", max_uses: 3 }] }
   */
  providerTools?: ProviderTools;
  budget?: AgentBudget;
  context?: ContextOptions;
  /** Structured working memory (memory_set/get/list tools) and search over the run's history (search_history). */
  memory?: MemoryOptions;
  /** Max tokens per model call (also the output estimate a budget check uses). Default 4096. */
  maxTokens?: number;
  temperature?: number;
  /** Retry policy of model calls. Default 4 attempts from 2 s. */
  retry?: RetryPolicy;
  /**
   * Flow control of model calls, shared by every run and worker on the store
   * (docs/operations/flow-control.md): a rate limit and/or a concurrency limit, per key. A function
   * gets the run's input, so the key can be its tenant. Limits without a `name` are named
   * `model:<model id>`, so every agent calling one model with one key shares them.
   * @example
   * modelFlow: (input) => ({ rateLimit: { key: input.tenant, limit: 60, period: "1m" }, concurrency: { key: input.tenant, limit: 2 } })
   */
  modelFlow?: StepFlowOptions | ((input: AgentInput & Record<string, unknown>) => StepFlowOptions);
  /** Price overrides (USD per million tokens) by model id. */
  prices?: CostOptions["prices"];
  /** Loop state snapshot interval (turns). Default 5. */
  snapshotEvery?: number;
  /**
   * A model call sent this many times without its response ever being journaled (the worker died
   * mid-call each time) is not sent again: a person is asked (`resend` / `stop`), or the run fails
   * with MODEL_CALL_UNCONFIRMED. Each such send counts as possibly billed. Default `{ max: 3, onLimit: "ask" }`.
   */
  unconfirmedCalls?: UnconfirmedCallsOptions;
  /**
   * Accepts a run started under another manifest (system prompt, tools, model, price table,
   * version): return true to resume it under this definition. Default: refuse with MANIFEST_CHANGED.
   */
  migrate?: (changes: ManifestChange[], was: AgentManifest, now: AgentManifest) => boolean;
}

/** The flow-control options of one model call: the agent's `modelFlow`, its limits named after the model unless named. */
function modelFlowOf(flow: AgentDefinition["modelFlow"], input: AgentInput, modelId: string): StepFlowOptions {
  const options = typeof flow === "function" ? flow(input as AgentInput & Record<string, unknown>) : flow;
  if (!options) return {};
  const named = <T extends { name?: string }>(limit: T | undefined): T | undefined => limit && { ...limit, name: limit.name ?? `model:${modelId}` };
  const rateLimit = named(options.rateLimit);
  const concurrency = named(options.concurrency);
  return { ...(rateLimit ? { rateLimit } : {}), ...(concurrency ? { concurrency } : {}) };
}

/**
 * The loop's state: journaled in snapshots, so it is all a resume needs (with the message rows its
 * `window` refers to). Runs started before agents had message rows carry `messages` instead.
 */
interface AgentState {
  /** Where the context window sits in the run's `agent_messages` rows. */
  window?: WindowRef;
  /** Runs journaled before message rows: the whole window, in every snapshot. */
  messages?: Message[];
  totals: AgentTotals;
  turns: number;
  approvedTiers: number;
  /** Summaries made so far (provenance lives in their journaled steps). */
  summaries: number;
  memory: Memory;
  /** What workflow tools (e.g. the plan tool) keep between calls, by tool name. */
  toolState?: Record<string, unknown>;
}

const CALL_ID = /[^a-zA-Z0-9_-]/g;

/**
 * Defines an agent: a workflow whose loop calls the model, runs the tools it asks for, and repeats
 * until the model answers without tool calls. Every model call is a step (a crash after it returns
 * never bills it again), every tool call is a step with its arguments' hash in the intent, approvals
 * are durable questions answered before the tool runs, and budgets are folds of the journal. The
 * loop runs on `ctx.loop`, so a resume reads only the newest snapshot and what follows.
 * @example
 * const researcher = defineAgent({ name: "researcher", model: modelFromEnv() ?? scripted, system: "…", tools: [search], budget: { maxCostUsd: 2 } });
 * await engine.start(researcher, { prompt: "What limits solid-state batteries?" });
 */
export function defineAgent(definition: AgentDefinition): Workflow<AgentInput, AgentResult> {
  const { name } = definition;
  if (!definition.model) throw new ValidationError(`Agent "${name}" needs a model.`);
  const budget = resolveBudget(name, definition.budget);
  const context = resolveContext(name, definition.context);
  const tools = new Map<string, Tool>();
  for (const tool of definition.tools ?? []) {
    if (!tool?.spec) throw new ValidationError(`Agent "${name}": tools must be made with defineTool.`);
    if (tools.has(tool.name)) throw new ValidationError(`Agent "${name}" has two tools named "${tool.name}".`);
    tools.set(tool.name, tool);
  }
  const memoryOptions = resolveMemory(name, definition.memory);
  if (memoryOptions) {
    for (const builtin of MEMORY_TOOLS)
      if (tools.has(builtin)) throw new ValidationError(`Agent "${name}": "${builtin}" is a built-in memory tool; rename your tool.`);
  }
  const providerTools = definition.providerTools === undefined ? undefined : ProviderToolsSchema.safeParse(definition.providerTools);
  if (providerTools && !providerTools.success)
    throw new ValidationError(
      `Agent "${name}": providerTools must be { openai?: object[], anthropic?: object[], "ai-sdk"?: object[] } (${describeIssues(providerTools.error)}).`,
    );
  const specs = [...tools.values()].map((tool) => tool.spec).concat(memoryOptions ? memoryToolSpecs(memoryOptions) : []);
  let model: Model | null = typeof definition.model === "function" ? null : definition.model;
  const getModel = () => (model ??= (definition.model as () => Model)());
  if (definition.fallbacks !== undefined && (!Array.isArray(definition.fallbacks) || definition.fallbacks.some((f) => typeof f !== "function" && !f?.generate)))
    throw new ValidationError(`Agent "${name}": fallbacks must be a list of models (or functions that make them).`);
  let fallbackModels: Model[] | null = null;
  const getFallbacks = () => (fallbackModels ??= (definition.fallbacks ?? []).map((f) => (typeof f === "function" ? f() : f)));
  const costOptions: CostOptions = definition.prices ? { prices: definition.prices } : {};
  const maxTokens = definition.maxTokens ?? 4096;
  const unconfirmed = resolveUnconfirmed(name, definition.unconfirmedCalls);

  return defineWorkflow<AgentInput, AgentResult>({
    name,
    ...(definition.version === undefined ? {} : { version: definition.version }),
    async run(ctx, input) {
      // The manifest is journaled first; a resume under a different definition must be accepted explicitly.
      const manifest = makeManifest(name, definition.version ?? "1", definition.system, specs, getModel().modelId);
      const runBudget = tighten(budget, input?.limits);
      // The limits ride along for views (spend against limit); diffManifests does not compare them.
      // `transcript: "rows"`: the run keeps its messages as rows and its snapshots refer to them; a run
      // journaled before that (no such field) replays as it was written, with the transcript in its state.
      const recorded = await ctx.step("manifest", () => ({ ...manifest, budget: budgetLimits(runBudget), transcript: "rows" as const }));
      const rows = (recorded as { transcript?: unknown }).transcript === "rows";
      const transcript = new Transcript();
      const pendingInitial = rows ? initialMessages(name, input) : null;
      const isSecretTool = (tool: string) => tools.get(tool)?.secret === true;
      const changes = diffManifests(recorded, manifest);
      if (changes.length > 0 && !definition.migrate?.(changes, recorded, manifest)) throw new ManifestChangedError(ctx.runId, changes);
      // A cost limit needs every model priced; without one, unpriced calls are reported as of unknown cost.
      const priced = [getModel().modelId, ...getFallbacks().map((f) => f.modelId), ...(context.summaryModel ? [context.summaryModel.modelId] : [])];
      requirePrices(name, runBudget.maxCostMicros !== null || runBudget.tiersMicros.length > 0, priced, costOptions);
      const initial: AgentState = {
        ...(rows ? { window: EMPTY_WINDOW } : { messages: initialMessages(name, input) }),
        totals: emptyTotals(),
        turns: 0,
        approvedTiers: 0,
        summaries: 0,
        memory: { ...(input?.memory ?? {}) },
      };
      const startedAt = ctx.now("started").getTime();
      return ctx.loop(
        "turn",
        initial,
        async (state, it) => {
          const turnCtx = it.ctx;
          const current = getModel();
          const started = startedAt;
          let window = state.window;
          let windowMessages: Message[];
          if (window) {
            windowMessages = await transcript.window(turnCtx, window);
            // The first turn journals the messages the run starts with.
            if (window.through === 0 && pendingInitial) {
              window = transcript.append(turnCtx, window, it.index, pendingInitial);
              windowMessages = await transcript.window(turnCtx, window);
            }
          } else windowMessages = state.messages ?? [];
          // Keep the prompt within the window: older turns become a journaled summary.
          const compacted = await compactIfNeeded(
            turnCtx,
            current,
            context,
            { system: definition.system, tools: specs, maxTokens },
            { messages: windowMessages, totals: state.totals, summaries: state.summaries },
            costOptions,
            (next) => checkBeforeCall(runBudget, state.totals, next, turnCtx.now("summary-clock").getTime() - started),
            { budget: runBudget, unconfirmed, fallbacks: getFallbacks() },
          );
          if (compacted.summaries !== state.summaries) {
            if (window) {
              // The summary replaced all but the last `compacted.messages.length - 1` messages.
              window = transcript.summarize(turnCtx, window, it.index, windowMessages.length - (compacted.messages.length - 1), compacted.messages[0]!);
              windowMessages = await transcript.window(turnCtx, window);
            } else windowMessages = compacted.messages;
            state = { ...state, totals: compacted.totals, summaries: compacted.summaries };
          }
          if (window) state = { ...state, window };
          const request: Omit<ModelRequest, "signal"> = { messages: windowMessages, maxTokens };
          if (definition.system !== undefined) request.system = definition.system;
          if (specs.length > 0) request.tools = specs;
          if (definition.temperature !== undefined) request.temperature = definition.temperature;
          if (providerTools?.data) request.providerTools = providerTools.data;

          const estimate = estimateTokens(request);
          const estimatedCost = knownEstimate(current.modelId, request, costOptions);
          const elapsed = turnCtx.now("clock").getTime() - startedAt;
          checkBeforeCall(runBudget, state.totals, { costMicros: estimatedCost ?? 0, ...estimate }, elapsed);
          state = await approveTier(turnCtx, runBudget, state, estimatedCost ?? 0);

          const call = await callModel(turnCtx, {
            model: current,
            request,
            estimatedCost,
            fallbacks: getFallbacks().map((fallback) => ({ model: fallback, estimatedCost: knownEstimate(fallback.modelId, request, costOptions) })),
            costOptions,
            retry: definition.retry ?? { maxAttempts: 4, initialDelay: "2s" },
            budget: runBudget,
            totals: state.totals,
            unconfirmed,
            seal: (response) => markSecretCalls(response, tools),
            flow: (model) => modelFlowOf(definition.modelFlow, input, model.modelId),
          });
          let totals = addCall(state.totals, call.usage, call.costMicros, call.possiblyBilledMicros ?? 0);
          const turns = state.turns + 1;
          const placed = (block: ToolUseBlock, index: number): PlacedCall => ({
            ...block,
            turn: it.index,
            duplicate: call.toolCalls.slice(0, index).filter((other) => other.id === block.id).length,
          });
          let messages: Message[];
          if (window) {
            const called: ToolCallRecord[] = call.toolCalls.map((block, index) => ({
              idempotencyKey: toolKey(ctx.runId, placed(block, index)),
              callId: block.id,
              tool: block.name,
              turn: it.index,
              status: "called",
              // The arguments are the assistant message's tool_use block (sealed there): not repeated.
            }));
            window = transcript.append(turnCtx, window, it.index, [{ role: "assistant", content: sealCalls(call.content, isSecretTool) } as Message], called);
            messages = await transcript.window(turnCtx, window);
          } else messages = [...windowMessages, { role: "assistant", content: call.content }];

          if (call.toolCalls.length === 0) {
            const result: AgentResult = { text: textOf(call.content), messages, stopReason: call.stopReason, totals, turns, memory: state.memory };
            return it.done(result);
          }
          checkToolCalls(runBudget, totals, call.toolCalls.length);
          // Every call gets exactly one result, in the order the model made them; they run concurrently,
          // except calls of workflow tools (e.g. the plan tool), which share state and run one after another.
          const remaining = runBudget.maxCostMicros === null ? null : Math.max(0, runBudget.maxCostMicros - spentMicros(totals));
          const memory = state.memory;
          const toolState = { ...state.toolState };
          let serial: Promise<unknown> = Promise.resolve();
          const outcomes = await Promise.all(
            call.toolCalls.map((block, index): Promise<CallOutcome | MemoryCall> => {
              const toolCall = placed(block, index);
              if (memoryOptions && (MEMORY_TOOLS as readonly string[]).includes(toolCall.name)) return runMemoryTool(turnCtx, memoryOptions, memory, toolCall);
              if (!tools.get(toolCall.name)?.workflow) return runToolCall(turnCtx, tools, toolCall, remaining, toolState);
              const outcome = serial.then(() => runToolCall(turnCtx, tools, toolCall, remaining, toolState));
              serial = outcome.catch(() => undefined);
              return outcome;
            }),
          );
          // Memory writes apply in the order the model made the calls.
          let nextMemory = memory;
          for (const outcome of outcomes) if ("set" in outcome && outcome.set) nextMemory = { ...nextMemory, [outcome.set.key]: outcome.set.value };
          totals = { ...totals, toolCalls: totals.toolCalls + call.toolCalls.length };
          // What sub-agents spent counts against this run's budget too.
          for (const outcome of outcomes) if ("child" in outcome && outcome.child) totals = addTotals(totals, outcome.child);
          const results = outcomes.map((outcome) => outcome.result);
          const rest = { totals, turns, memory: nextMemory, ...(Object.keys(toolState).length > 0 ? { toolState } : {}) };
          if (!window) return { ...state, messages: [...messages, { role: "tool" as const, content: results }], ...rest };
          const secretIds = new Set(call.toolCalls.filter((block) => isSecretTool(block.name)).map((block) => block.id));
          const answered: ToolCallRecord[] = call.toolCalls.map((block, index) => {
            const result = results[index]!;
            return {
              idempotencyKey: toolKey(ctx.runId, placed(block, index)),
              callId: block.id,
              tool: block.name,
              turn: it.index,
              status: result.isError ? "failed" : "completed",
              // The result is the tool message's tool_result block (sealed there): not repeated.
            };
          });
          window = transcript.append(turnCtx, window, it.index, [{ role: "tool", content: sealResults(results, secretIds) }], answered);
          return { ...state, window, ...rest };
        },
        { snapshotEvery: definition.snapshotEvery ?? 5 },
      );
    },
  });
}

function resolveUnconfirmed(agent: string, options: UnconfirmedCallsOptions | undefined): Required<UnconfirmedCallsOptions> {
  const max = options?.max ?? 3;
  const onLimit = options?.onLimit ?? "ask";
  if (!Number.isInteger(max) || max < 1) throw new ValidationError(`Agent "${agent}": unconfirmedCalls.max must be a whole number ≥ 1 (got ${String(max)}).`);
  if (onLimit !== "ask" && onLimit !== "fail") throw new ValidationError(`Agent "${agent}": unconfirmedCalls.onLimit must be "ask" or "fail".`);
  return { max, onLimit };
}

function initialMessages(agent: string, input: AgentInput): Message[] {
  if (input && typeof input === "object" && "prompt" in input && typeof input.prompt === "string" && input.prompt !== "") {
    return [{ role: "user", content: input.prompt }];
  }
  if (input && typeof input === "object" && "messages" in input && Array.isArray(input.messages) && input.messages.length > 0) return input.messages;
  throw new ValidationError(`Agent "${agent}" takes { prompt: string } or { messages: Message[] } as input.`);
}

/** Before a call could enter the next cost tier, a person decides whether the run goes on. */
async function approveTier(ctx: WorkflowContext, budget: ResolvedBudget, state: AgentState, nextCost: number): Promise<AgentState> {
  let approved = state.approvedTiers;
  for (let tier = tierToEnter(budget, state.totals, nextCost, approved); tier >= 0; tier = tierToEnter(budget, state.totals, nextCost, approved)) {
    const limit = budget.tiersMicros[tier]! / 1e6;
    const reply = await ctx.askHuman({
      name: `budget-tier-${tier}`,
      question: `The run has spent $${(spentMicros(state.totals) / 1e6).toFixed(4)}; its next model call may take it past $${limit}. Continue?`,
      options: ["continue", "stop"],
      context: { tier: limit, spentMicros: spentMicros(state.totals), nextCallMicros: nextCost },
      ...(budget.tierApproval.timeout === undefined ? {} : { timeout: budget.tierApproval.timeout }),
      onTimeout: { option: budget.tierApproval.onTimeout },
    });
    if (reply.option !== "continue")
      throw new BudgetExceededError(`tiers[${tier}] (declined by ${reply.by ?? "someone"})`, limit, state.totals, nextCost / 1e6);
    approved = tier + 1;
  }
  return approved === state.approvedTiers ? state : { ...state, approvedTiers: approved };
}

/** The limits of a budget, as the manifest journals them. */
function budgetLimits(budget: ResolvedBudget): BudgetLimits {
  return {
    maxCostMicros: budget.maxCostMicros,
    maxTokens: Object.fromEntries(Object.entries(budget.maxTokens).filter(([, value]) => typeof value === "number")) as Record<string, number>,
    maxSteps: budget.maxSteps,
    maxToolCalls: budget.maxToolCalls,
    maxWallTimeMs: budget.maxWallTimeMs,
    tiersMicros: [...budget.tiersMicros],
  };
}

/** The tighter of an agent's budget and the limits its parent passed down. */
function tighten(budget: ResolvedBudget, limits: AgentInput["limits"]): ResolvedBudget {
  const parent = limits?.maxCostMicros;
  if (typeof parent !== "number" || !Number.isFinite(parent) || parent < 0) return budget;
  return { ...budget, maxCostMicros: budget.maxCostMicros === null ? parent : Math.min(budget.maxCostMicros, parent) };
}

/** A tool that hands a task to another agent: it runs as a child run, and its spend counts against the caller's budget. */
export interface AgentTool extends Tool<{ task: string }, string> {
  readonly agent: Workflow<AgentInput, AgentResult>;
}

/**
 * Makes a sub-agent callable as a tool. The call runs the agent as a child run (durable on its own,
 * visible in `cairn runs`), limited to what is left of the caller's cost budget; its totals are added
 * to the caller's.
 * @example
 * const research = agentTool({ name: "research", description: "Researches a question in depth.", agent: researcher });
 */
export function agentTool(options: { name: string; description: string; agent: Workflow<AgentInput, AgentResult> }): AgentTool {
  const tool = defineTool({
    name: options.name,
    description: options.description,
    input: z.object({ task: z.string().min(1).describe("What the sub-agent should do, with everything it needs to know.") }),
    effect: "none",
    run: (): string => {
      throw new Error(`agentTool "${options.name}" runs as a child run, not as a step.`);
    },
  });
  return Object.freeze({ ...tool, agent: options.agent });
}

interface CallOutcome {
  result: ToolResult;
  /** What a sub-agent spent. */
  child?: AgentTotals;
}

/** A tool call with where it sits in the run: the turn (loop iteration) and its rank among same-id calls of that turn. */
interface PlacedCall extends ToolUseBlock {
  turn: number;
  duplicate: number;
}

/**
 * `<runId>:tool:<turn>:<callId>` (`#<k>` appended for the k-th repeat of an id within one response):
 * unique within the run by construction, even when a provider numbers call ids per response
 * (`call_0` on every turn), and the same on every attempt and after every crash (the turn and the
 * response are journaled). Runs journaled before the turn was part of the key keep replaying: the key
 * is never read back from the journal, only handed to the tool.
 */
export function toolKey(runId: string, call: PlacedCall): string {
  return `${runId}:tool:${call.turn}:${call.id}${call.duplicate > 0 ? `#${call.duplicate}` : ""}`;
}

/** One tool call to its one result: validated, approved if needed, run as a journaled step (or a child run). */
async function runToolCall(
  ctx: WorkflowContext,
  tools: Map<string, Tool>,
  call: PlacedCall,
  remainingMicros: number | null,
  toolState: Record<string, unknown>,
): Promise<CallOutcome> {
  const outcome = await runToolCallInner(ctx, tools, call, remainingMicros, toolState);
  return "type" in outcome ? { result: outcome } : outcome;
}

async function runToolCallInner(
  ctx: WorkflowContext,
  tools: Map<string, Tool>,
  call: PlacedCall,
  remainingMicros: number | null,
  toolState: Record<string, unknown>,
): Promise<ToolResult | CallOutcome> {
  const error = (content: string): ToolResult => ({ type: "tool_result", toolUseId: call.id, content, isError: true });
  const tool = tools.get(call.name);
  if (!tool) return error(`There is no tool named "${call.name}". Available: ${[...tools.keys()].join(", ") || "none"}.`);
  if (typeof call.input === "string") return error(`The arguments are not valid JSON: ${call.input.slice(0, 200)}`);
  const parsed = tool.input.safeParse(call.input);
  if (!parsed.success) return error(`Invalid arguments for ${tool.name}: ${describeIssues(parsed.error)}`);
  let args: unknown = parsed.data;
  const suffix = call.id.replace(CALL_ID, "_");
  let approvedBy: string | null = null;
  /** What the model is told about a person's part in the call, ahead of the tool's output. */
  let approvalNote = "";

  const policy = tool.approvalPolicy;
  if (policy && (policy.when?.(args) ?? true)) {
    const hash = argumentsHash(args);
    const reply = await ctx.askHuman<unknown>({
      name: `approve-${suffix}`,
      question: policy.question?.(args) ?? `Allow ${tool.name} with ${JSON.stringify(args).slice(0, 500)}?`,
      options: ["approve", "reject", "edit"],
      context: { tool: tool.name, toolCallId: call.id, arguments: tool.secret ? secret(args) : args, argumentsHash: hash },
      ...(policy.timeout === undefined ? {} : { timeout: policy.timeout }),
      onTimeout: policy.onTimeout === "fail" ? "fail" : { option: policy.onTimeout ?? "reject" },
    });
    approvedBy = reply.by ?? "someone";
    const note = reply.message ? ` Their note: ${reply.message}` : "";
    if (reply.option === "reject") return error(`A person (${approvedBy}) rejected this call; it did not run.${note}`);
    if (reply.option === "edit") {
      const edited = tool.input.safeParse(reply.value);
      if (!edited.success)
        return error(`The arguments ${approvedBy} edited are invalid for ${tool.name} (${describeIssues(edited.error)}); the call did not run.${note}`);
      args = edited.data;
      // The assistant's tool call keeps the arguments the model sent (every provider's transcript stays
      // valid and matches what the model said); the result says what actually ran.
      const shown = tool.secret ? "[redacted]" : JSON.stringify(args).slice(0, 2000);
      approvalNote = `[A person (${approvedBy}) edited the arguments before the call ran; it ran with ${shown}.${note}]\n`;
    } else if (reply.message) {
      approvalNote = `[Approved by ${approvedBy}.${note}]\n`;
    }
  }

  if ("agent" in tool && tool.agent) {
    const input: AgentInput = { prompt: (args as { task: string }).task };
    if (remainingMicros !== null) input.limits = { maxCostMicros: remainingMicros };
    try {
      const child = await ctx.child(tool.agent as Workflow<AgentInput, AgentResult>, input, { name: `agent-${suffix}` });
      return { result: { type: "tool_result", toolUseId: call.id, content: approvalNote + child.text }, child: child.totals };
    } catch (failure) {
      if (!isCairnError(failure, "RUN_FAILED") && !isCairnError(failure, "RUN_CANCELLED")) throw failure;
      return error(`The sub-agent ${tool.name} did not finish: ${(failure as Error).message}`);
    }
  }

  const runId = ctx.runId;
  const idempotencyKey = toolKey(runId, call);
  if (tool.workflow) {
    try {
      const output = await tool.workflow(args, {
        ctx,
        toolCallId: call.id,
        runId,
        state: toolState[tool.name],
        setState: (next) => (toolState[tool.name] = next),
      });
      return { type: "tool_result", toolUseId: call.id, content: approvalNote + formatOutput(tool, output) };
    } catch (failure) {
      // Bad requests from the model go back to it; anything else (lease lost, divergence) ends the turn.
      if (!isCairnError(failure, "INVALID_INPUT")) throw failure;
      return error(`${tool.name}: ${(failure as Error).message}`);
    }
  }
  try {
    const output = await ctx.step(
      `tool-${suffix}`,
      (info) =>
        tool.run(args, {
          idempotencyKey,
          toolCallId: call.id,
          runId,
          attempt: info.attempt,
          signal: info.signal,
          heartbeat: info.heartbeat,
          credential: (name) => toolCredential(ctx, tool, name),
        }),
      {
        effect: tool.effect,
        intent: {
          tool: tool.name,
          toolCallId: call.id,
          idempotencyKey,
          effect: tool.effect,
          argumentsHash: argumentsHash(args),
          ...(approvedBy === null ? {} : { approvedBy }),
        },
        ...(tool.secret ? { secret: true } : { searchText: (output: unknown) => `${tool.name} ${JSON.stringify(args)} → ${formatOutput(tool, output)}` }),
        ...(tool.retry === undefined ? {} : { retry: tool.retry }),
        ...(tool.timeout === undefined ? {} : { timeout: tool.timeout }),
        ...(tool.resumeApproval === undefined ? {} : { approval: tool.resumeApproval }),
        // What an operator needs to answer "did this happen?" without rebuilding anything from op keys.
        recoveryContext: {
          tool: tool.name,
          toolCallId: call.id,
          idempotencyKey,
          arguments: tool.secret ? secret(args) : (args as JsonValue),
          argumentsHash: argumentsHash(args),
        },
        resultSchema: tool.outputSchema ?? {},
        ...(tool.reconcile ? { reconcile: () => tool.reconcile!(args, idempotencyKey) } : {}),
        ...(tool.compensate ? { compensate: (result: unknown) => tool.compensate!(args, result, idempotencyKey) } : {}),
      },
    );
    return { type: "tool_result", toolUseId: call.id, content: approvalNote + formatOutput(tool, output) };
  } catch (failure) {
    // A tool that failed for good is reported to the model; anything else (lease lost, divergence) ends the turn.
    if (!isCairnError(failure, "STEP_FAILED")) throw failure;
    return error(`${tool.name} failed: ${(failure as Error).message}`);
  }
}

/**
 * The model's calls of secret tools, with their arguments marked `secret()` in the journaled response
 * (the agent gets them back plain), so every view of the run redacts them from the start.
 */
function markSecretCalls(call: ModelCall, tools: Map<string, Tool>): ModelCall {
  const isSecret = (name: string) => tools.get(name)?.secret === true;
  if (!call.toolCalls.some((toolCall) => isSecret(toolCall.name))) return call;
  const mark = <B extends { type: string }>(block: B): B =>
    block.type === "tool_use" && isSecret((block as unknown as ToolUseBlock).name)
      ? ({ ...block, input: secret((block as unknown as ToolUseBlock).input) } as B)
      : block;
  return { ...call, content: call.content.map(mark), toolCalls: call.toolCalls.map(mark) };
}

/** A tool's `context.credential`: only the names the tool declared, used with the scope `tool:<name>`. */
function toolCredential(ctx: WorkflowContext, tool: Tool, name: string): Promise<string> {
  if (!tool.credentials?.includes(name)) {
    return Promise.reject(
      new ValidationError(
        `Tool "${tool.name}" asked for credential "${name}", which it does not declare: add it to the tool's credentials ([${(tool.credentials ?? []).join(", ")}]).`,
      ),
    );
  }
  return ctx.credential(name, { scope: `tool:${tool.name}` });
}
