/**
 * Mapping between neutral messages and the AI SDK language model specification (V2, V3, V4), typed
 * with `@ai-sdk/provider`'s own types. Internal to the adapter (not exported from `cairn/agent`).
 */
import type { LanguageModelV2CallOptions, LanguageModelV2Content, LanguageModelV2Message, LanguageModelV2Usage, LanguageModelV3Usage } from "@ai-sdk/provider";
import { count, makeResponse, toJson } from "./messages.js";
import type { ModelRequest, ModelResponse } from "./model.js";
import type { ContentBlock, JsonValue, Message, ProviderData, StopReason, Usage, UserBlock } from "./schemas.js";

// The generate result of every supported version, reduced to the fields the adapter reads.
// V2 has a flat usage and a string finish reason; V3 and V4 nest both.
export interface GenerateResult {
  content: LanguageModelV2Content[];
  finishReason: string | { unified: string; raw: string | undefined };
  usage: LanguageModelV2Usage | LanguageModelV3Usage;
  providerMetadata?: unknown;
  response?: { id?: string; modelId?: string; timestamp?: Date; headers?: unknown; body?: unknown };
  warnings?: unknown[];
}

const KEY = "ai-sdk";

function sdkData(provider: ProviderData | undefined): Record<string, Record<string, JsonValue>> | undefined {
  const data = provider?.[KEY];
  return data !== null && typeof data === "object" && !Array.isArray(data) ? (data as Record<string, Record<string, JsonValue>>) : undefined;
}

/**
 * Maps a neutral request's messages to an AI SDK prompt. Thinking blocks are sent back as `reasoning`
 * parts carrying their original `providerMetadata` as `providerOptions` (that is where the Anthropic
 * provider keeps signatures); a tool result takes its tool name from the call it answers.
 */
export function toAiSdkPrompt(messages: Message[], system?: string): LanguageModelV2Message[] {
  const prompt: LanguageModelV2Message[] = [];
  if (system !== undefined) prompt.push({ role: "system", content: system });
  const toolNames = new Map<string, string>();
  for (const message of messages) {
    if (message.role === "user") {
      const parts = typeof message.content === "string" ? [{ type: "text" as const, text: message.content }] : message.content.map(toAiSdkUserPart);
      prompt.push({ role: "user", content: parts });
    } else if (message.role === "tool") {
      prompt.push({
        role: "tool",
        content: message.content.map((r) => ({
          type: "tool-result" as const,
          toolCallId: r.toolUseId,
          toolName: toolNames.get(r.toolUseId) ?? "unknown",
          output: r.isError ? { type: "error-text" as const, value: r.content } : { type: "text" as const, value: r.content },
        })),
      });
    } else {
      const parts: Extract<LanguageModelV2Message, { role: "assistant" }>["content"] = [];
      for (const block of message.content) {
        if (block.type === "hosted_tool") {
          const part = hostedPart(block);
          if (part) parts.push(part);
          continue;
        }
        const providerOptions = sdkData(block.provider);
        const withOptions = <T extends object>(part: T) => (providerOptions ? { ...part, providerOptions } : part);
        if (block.type === "text") parts.push(withOptions({ type: "text" as const, text: block.text }));
        else if (block.type === "tool_use") {
          toolNames.set(block.id, block.name);
          parts.push(withOptions({ type: "tool-call" as const, toolCallId: block.id, toolName: block.name, input: block.input }));
        } else if (block.type === "thinking") {
          const options = providerOptions ?? (block.signature ? { anthropic: { signature: block.signature } } : undefined);
          parts.push(options ? { type: "reasoning", text: block.thinking, providerOptions: options } : { type: "reasoning", text: block.thinking });
        } else if (providerOptions) {
          parts.push({ type: "reasoning", text: "", providerOptions });
        } else {
          parts.push({ type: "reasoning", text: "", providerOptions: { anthropic: { redactedData: block.data } } });
        }
      }
      prompt.push({ role: "assistant", content: parts });
    }
  }
  return prompt;
}

type UserPart = Extract<LanguageModelV2Message, { role: "user" }>["content"][number];
type AssistantPart = Extract<LanguageModelV2Message, { role: "assistant" }>["content"][number];

/**
 * A provider-executed tool call or result, sent back as the assistant's own part (the AI SDK prompt
 * carries both in the assistant turn) with its provider metadata as provider options. A hosted tool
 * block from another adapter is left out.
 */
function hostedPart(block: ContentBlock & { type: "hosted_tool" }): AssistantPart | undefined {
  const data = block.provider[KEY];
  const part = data !== null && typeof data === "object" && !Array.isArray(data) ? (data["part"] as Record<string, JsonValue> | undefined) : undefined;
  if (!part || typeof part !== "object") return undefined;
  const options = part["providerMetadata"] ? { providerOptions: part["providerMetadata"] as never } : {};
  const toolCallId = String(part["toolCallId"] ?? block.id ?? "");
  const toolName = String(part["toolName"] ?? block.name);
  if (part["type"] === "tool-call") return { type: "tool-call", toolCallId, toolName, input: parseInput(part["input"]), providerExecuted: true, ...options };
  const result = part["result"] ?? null;
  return {
    type: "tool-result",
    toolCallId,
    toolName,
    output: part["isError"] === true ? { type: "error-json", value: result } : { type: "json", value: result },
    ...options,
  } as AssistantPart;
}

/**
 * A user block as an AI SDK prompt part: text, or a `file` part (images with an `image/*` media type).
 * A URL goes as a `URL` (the provider fetches it or passes it on); a provider file id goes as the
 * part's data, which the provider package recognises by its prefix (`file-…` for OpenAI).
 */
function toAiSdkUserPart(block: UserBlock): UserPart {
  if (block.type === "text") return { type: "text", text: block.text };
  const source = block.source;
  const named = block.type === "file" && block.filename ? { filename: block.filename } : {};
  const fallbackType = block.type === "image" ? "image/*" : "application/pdf";
  if (source.type === "base64") return { type: "file", ...named, mediaType: source.mediaType, data: source.data };
  if (source.type === "url")
    return { type: "file", ...named, mediaType: ("mediaType" in source && source.mediaType) || fallbackType, data: new URL(source.url) };
  return { type: "file", ...named, mediaType: source.mediaType ?? fallbackType, data: source.fileId };
}

/** Builds the `doGenerate` call options for a neutral request. */
export function toAiSdkCallOptions(request: ModelRequest, options: { callOptions?: Record<string, unknown> } = {}): LanguageModelV2CallOptions {
  const call: LanguageModelV2CallOptions = {
    ...(options.callOptions as Partial<LanguageModelV2CallOptions>),
    prompt: toAiSdkPrompt(request.messages, request.system),
  };
  if (request.maxTokens !== undefined) call.maxOutputTokens = request.maxTokens;
  if (request.temperature !== undefined) call.temperature = request.temperature;
  if (request.tools?.length)
    call.tools = request.tools.map((t) => ({ type: "function", name: t.name, description: t.description, inputSchema: t.inputSchema as never }));
  const hosted = request.providerTools?.["ai-sdk"];
  if (hosted?.length) call.tools = [...(call.tools ?? []), ...(hosted as never[])];
  if (request.toolChoice !== undefined) {
    const c = request.toolChoice;
    call.toolChoice = typeof c === "string" ? { type: c } : { type: "tool", toolName: c.name };
  }
  const format = request.responseFormat;
  if (format)
    call.responseFormat = {
      type: "json",
      schema: format.schema as never,
      name: format.name,
      ...(format.description ? { description: format.description } : {}),
    };
  if (request.signal) call.abortSignal = request.signal;
  return call;
}

function parseInput(input: unknown): JsonValue {
  if (typeof input !== "string") return (input ?? {}) as JsonValue;
  try {
    return JSON.parse(input) as JsonValue;
  } catch {
    return input; // invalid JSON from the model: the tool layer reports it back as a tool error
  }
}

const FINISH: Record<string, StopReason> = { stop: "end_turn", length: "max_tokens", "tool-calls": "tool_use", "content-filter": "refusal" };

function usageOf(usage: GenerateResult["usage"]): Usage {
  if (typeof usage.inputTokens === "object" && usage.inputTokens !== null) {
    const u = usage as LanguageModelV3Usage; // v3, v4
    const cacheRead = count(u.inputTokens.cacheRead);
    const cacheWrite = count(u.inputTokens.cacheWrite);
    const fresh = u.inputTokens.noCache ?? count(u.inputTokens.total) - cacheRead - cacheWrite;
    return {
      inputTokens: count(fresh),
      outputTokens: count(u.outputTokens.total),
      cacheReadTokens: cacheRead,
      cacheWriteTokens: cacheWrite,
      reasoningTokens: count(u.outputTokens.reasoning),
    };
  }
  const u = usage as LanguageModelV2Usage;
  const cached = count(u.cachedInputTokens);
  return {
    inputTokens: Math.max(0, count(u.inputTokens) - cached),
    outputTokens: count(u.outputTokens),
    cacheReadTokens: cached,
    cacheWriteTokens: 0,
    reasoningTokens: count(u.reasoningTokens),
  };
}

/**
 * Maps a `doGenerate` result (any supported version) to a neutral response. Provider-executed tool
 * calls and results become `hosted_tool` blocks; parts Cairn does not model (files, sources) stay in `raw` only.
 */
export function fromAiSdkResult(result: GenerateResult, modelId: string, keepRaw = true): ModelResponse {
  const content: ContentBlock[] = [];
  const unmapped: unknown[] = [];
  for (const part of result.content) {
    if (part.type !== "text" && part.type !== "reasoning" && part.type !== "tool-call" && part.type !== "tool-result") unmapped.push(part);
    const metadata = "providerMetadata" in part && part.providerMetadata ? (part.providerMetadata as ProviderData) : undefined;
    const provider = metadata ? { [KEY]: metadata } : undefined;
    const withProvider = <T extends ContentBlock>(block: T): T => (provider ? { ...block, provider } : block);
    if (part.type === "text") content.push(withProvider({ type: "text", text: part.text }));
    else if (part.type === "tool-call" && !part.providerExecuted)
      content.push(withProvider({ type: "tool_use", id: part.toolCallId, name: part.toolName, input: parseInput(part.input) }));
    else if (part.type === "tool-call" || part.type === "tool-result") {
      // Provider-executed: the provider ran the tool itself (web search, code execution…).
      const result = part.type === "tool-result" ? (part as { result?: unknown }).result : undefined;
      const block: ContentBlock = {
        type: "hosted_tool",
        name: part.toolName,
        id: part.toolCallId,
        phase: part.type === "tool-call" ? "call" : "result",
        provider: { [KEY]: { part: toJson(part) } },
      };
      if (part.type === "tool-call") block.input = parseInput(part.input);
      else if (result !== undefined) block.output = toJson(result);
      content.push(block);
    } else if (part.type === "reasoning") {
      const anthropic = part.providerMetadata?.["anthropic"] as { signature?: unknown; redactedData?: unknown } | undefined;
      if (typeof anthropic?.redactedData === "string") content.push(withProvider({ type: "redacted_thinking", data: anthropic.redactedData }));
      else if (typeof anthropic?.signature === "string") content.push(withProvider({ type: "thinking", thinking: part.text, signature: anthropic.signature }));
      else content.push(withProvider({ type: "thinking", thinking: part.text }));
    }
  }
  const unified = typeof result.finishReason === "string" ? result.finishReason : result.finishReason.unified;
  const rawReason = typeof result.finishReason === "string" ? result.finishReason : (result.finishReason.raw ?? unified);
  let stopReason = FINISH[unified] ?? "other";
  if (stopReason === "end_turn" && content.some((b) => b.type === "tool_use")) stopReason = "tool_use";
  return makeResponse({
    content,
    stopReason,
    rawStopReason: rawReason,
    usage: usageOf(result.usage),
    model: result.response?.modelId ?? modelId,
    id: result.response?.id,
    // The request body repeats the whole prompt: leave it out of what gets journaled.
    raw: keepRaw
      ? {
          content: result.content,
          finishReason: result.finishReason,
          usage: result.usage,
          providerMetadata: result.providerMetadata,
          response: result.response,
          warnings: result.warnings,
        }
      : unmapped.length > 0
        ? { unmapped }
        : {},
  });
}
