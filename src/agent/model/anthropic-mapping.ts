/**
 * Mapping between neutral messages and the Anthropic Messages API, typed with the SDK's own types.
 * Internal to the adapter (not exported from `cairn/agent`, so its declarations need no SDK).
 */
import type Anthropic from "@anthropic-ai/sdk";
import { count, makeResponse, toJson } from "./messages.js";
import type { ModelRequest, ModelResponse } from "./model.js";
import { ModelInputUnsupportedError } from "./errors.js";
import type { ContentBlock, Message, StopReason, ToolChoice, Usage, UserBlock } from "./schemas.js";

type MessageParam = Anthropic.Messages.MessageParam;
type ContentBlockParam = Anthropic.Messages.ContentBlockParam;
type CreateParams = Anthropic.Messages.MessageCreateParamsNonStreaming;
type AnthropicMessage = Anthropic.Messages.Message;

/** Maps neutral messages to Anthropic `messages`: tool results become `tool_result` blocks of a user turn. */
export function toAnthropicMessages(messages: Message[]): MessageParam[] {
  const out: MessageParam[] = [];
  // Anthropic wants tool results first in the user turn that follows the tool calls; a user message
  // right after a tool message joins that same turn.
  const pushUser = (blocks: ContentBlockParam[]) => {
    const last = out[out.length - 1];
    if (last?.role === "user" && Array.isArray(last.content)) last.content.push(...blocks);
    else out.push({ role: "user", content: blocks });
  };
  for (const message of messages) {
    if (message.role === "user") {
      const blocks: ContentBlockParam[] =
        typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content.map(toAnthropicUserBlock);
      const last = out[out.length - 1];
      if (last?.role === "user") pushUser(blocks);
      else out.push({ role: "user", content: typeof message.content === "string" ? message.content : blocks });
    } else if (message.role === "tool") {
      pushUser(
        message.content.map((r) => {
          const block: Anthropic.Messages.ToolResultBlockParam = { type: "tool_result", tool_use_id: r.toolUseId, content: r.content };
          if (r.isError) block.is_error = true;
          return block;
        }),
      );
    } else {
      // A thinking block without a signature came from another provider: Anthropic would reject it.
      // A hosted tool block from another provider is left out too.
      const blocks = message.content
        .filter((b) => (b.type !== "thinking" || b.signature) && (b.type !== "hosted_tool" || anthropicItem(b) !== undefined))
        .map(toAnthropicBlock);
      out.push({ role: "assistant", content: blocks });
    }
  }
  return out;
}

/** Document media types the Messages API reads. */
const DOCUMENT_TYPES = new Set(["application/pdf", "text/plain"]);

/** A user block as a Messages content block: `text`, `image` or `document` (PDF or plain text). */
function toAnthropicUserBlock(block: UserBlock): ContentBlockParam {
  if (block.type === "text") return { type: "text", text: block.text };
  if (block.type === "image") {
    const source = block.source;
    if (source.type === "base64") return { type: "image", source: { type: "base64", media_type: source.mediaType, data: source.data } };
    if (source.type === "url") return { type: "image", source: { type: "url", url: source.url } };
    return { type: "image", source: { type: "file", file_id: source.fileId } };
  }
  const source = block.source;
  const title = block.filename ? { title: block.filename } : {};
  const media = source.type === "file_id" ? undefined : source.mediaType;
  if (media !== undefined && !DOCUMENT_TYPES.has(media))
    throw new ModelInputUnsupportedError(
      "anthropic",
      `a file of type "${media}"${block.filename ? ` (${block.filename})` : ""}: Anthropic reads PDF (application/pdf) and plain text (text/plain) documents. Convert it, or send it to a model that reads it.`,
    );
  if (source.type === "base64") {
    if (source.mediaType === "text/plain")
      return { type: "document", ...title, source: { type: "text", media_type: "text/plain", data: Buffer.from(source.data, "base64").toString("utf8") } };
    return { type: "document", ...title, source: { type: "base64", media_type: "application/pdf", data: source.data } };
  }
  if (source.type === "url") return { type: "document", ...title, source: { type: "url", url: source.url } };
  return { type: "document", ...title, source: { type: "file", file_id: source.fileId } };
}

function toAnthropicBlock(block: ContentBlock): ContentBlockParam {
  switch (block.type) {
    case "text":
      return { type: "text", text: block.text };
    case "tool_use":
      return { type: "tool_use", id: block.id, name: block.name, input: block.input };
    case "thinking":
      return { type: "thinking", thinking: block.thinking, signature: block.signature! };
    case "redacted_thinking":
      return { type: "redacted_thinking", data: block.data };
    case "hosted_tool":
      return anthropicItem(block)!;
  }
}

/** The verbatim server tool block a `hosted_tool` block carries, when it came from Anthropic. */
function anthropicItem(block: ContentBlock): ContentBlockParam | undefined {
  const data = block.provider?.["anthropic"];
  const item = data !== null && typeof data === "object" && !Array.isArray(data) ? data["block"] : undefined;
  return item !== null && typeof item === "object" && !Array.isArray(item) ? (item as unknown as ContentBlockParam) : undefined;
}

/** A server tool block (`server_tool_use`, `web_search_tool_result`, …) as a `hosted_tool` block, kept verbatim. */
function hostedBlock(block: Record<string, unknown>): ContentBlock {
  const type = String(block["type"]);
  const result = type.endsWith("_result");
  const out: ContentBlock = {
    type: "hosted_tool",
    name: typeof block["name"] === "string" ? block["name"] : type.replace(/_tool_result$/, "").replace(/_result$/, ""),
    phase: result ? "result" : "call",
    provider: { anthropic: { block: toJson(block) } },
  };
  const id = block["id"] ?? block["tool_use_id"];
  if (typeof id === "string") out.id = id;
  if (!result && block["input"] !== undefined) out.input = toJson(block["input"]);
  if (result && block["content"] !== undefined) out.output = toJson(block["content"]);
  return out;
}

function toAnthropicToolChoice(choice: ToolChoice): Anthropic.Messages.ToolChoice {
  if (choice === "auto") return { type: "auto" };
  if (choice === "none") return { type: "none" };
  if (choice === "required") return { type: "any" };
  return { type: "tool", name: choice.name };
}

/** Builds the `messages.create` parameters for a neutral request. */
export function toAnthropicParams(
  request: ModelRequest,
  options: { model: string; defaultMaxTokens?: number; params?: Record<string, unknown> },
): CreateParams {
  const params: CreateParams = {
    ...(options.params as Partial<CreateParams>),
    model: options.model,
    max_tokens: request.maxTokens ?? options.defaultMaxTokens ?? 4096,
    messages: toAnthropicMessages(request.messages),
  };
  if (request.system !== undefined) params.system = request.system;
  // The SDK's types no longer list `temperature` (recent Claude models reject sampling parameters),
  // but older models accept it: send it only when the caller asked for it.
  if (request.temperature !== undefined) (params as CreateParams & { temperature?: number }).temperature = Math.min(request.temperature, 1);
  if (request.tools?.length) {
    params.tools = request.tools.map((t) => ({
      name: t.name,
      description: t.description,
      input_schema: { type: "object", ...t.inputSchema } as Anthropic.Messages.Tool.InputSchema,
    }));
  }
  const hosted = request.providerTools?.anthropic;
  if (hosted?.length) params.tools = [...(params.tools ?? []), ...(hosted as unknown as Anthropic.Messages.ToolUnion[])];
  if (request.toolChoice !== undefined) params.tool_choice = toAnthropicToolChoice(request.toolChoice);
  if (request.responseFormat) params.output_config = { ...params.output_config, format: { type: "json_schema", schema: request.responseFormat.schema } };
  return params;
}

const STOP_REASONS: Record<string, StopReason> = {
  end_turn: "end_turn",
  tool_use: "tool_use",
  max_tokens: "max_tokens",
  stop_sequence: "stop_sequence",
  refusal: "refusal",
  model_context_window_exceeded: "max_tokens",
};

/**
 * Maps an Anthropic `Message` to a neutral response. Server tool blocks become `hosted_tool` blocks;
 * with `keepRaw` the whole message is kept in `raw`.
 */
export function fromAnthropicMessage(message: AnthropicMessage, keepRaw = true): ModelResponse {
  const content: ContentBlock[] = [];
  for (const block of message.content) {
    if (block.type === "text") content.push({ type: "text", text: block.text });
    else if (block.type === "tool_use") content.push({ type: "tool_use", id: block.id, name: block.name, input: (block.input ?? {}) as never });
    else if (block.type === "thinking") content.push({ type: "thinking", thinking: block.thinking, signature: block.signature });
    else if (block.type === "redacted_thinking") content.push({ type: "redacted_thinking", data: block.data });
    else content.push(hostedBlock(block as unknown as Record<string, unknown>));
  }
  const u = message.usage;
  const usage: Usage = {
    inputTokens: count(u.input_tokens),
    outputTokens: count(u.output_tokens),
    cacheReadTokens: count(u.cache_read_input_tokens),
    cacheWriteTokens: count(u.cache_creation_input_tokens),
    reasoningTokens: count(u.output_tokens_details?.thinking_tokens),
  };
  const raw = message.stop_reason;
  return makeResponse({
    content,
    stopReason: raw ? (STOP_REASONS[raw] ?? "other") : "other",
    rawStopReason: raw,
    usage,
    model: message.model,
    id: message.id,
    raw: keepRaw ? message : {},
  });
}
