/**
 * Mapping between neutral messages and the OpenAI Responses API, typed with the SDK's own types.
 * Internal to the adapter (not exported from `cairn/agent`, so its declarations need no SDK).
 */
import type OpenAI from "openai";
import { count, makeResponse, toJson } from "./messages.js";
import type { ModelRequest, ModelResponse } from "./model.js";
import type { ContentBlock, JsonValue, Message, StopReason, ToolChoice, UserBlock } from "./schemas.js";

type CreateParams = OpenAI.Responses.ResponseCreateParamsNonStreaming;
type InputItem = OpenAI.Responses.ResponseInputItem;
type OpenAIResponse = OpenAI.Responses.Response;

interface OpenAIBlockData {
  /** The output item the block came from (`msg_…`, `fc_…`, `rs_…`). */
  itemId?: string;
  /** A reasoning item's summary parts, verbatim. */
  summary?: string[];
}

function openaiData(block: ContentBlock): OpenAIBlockData {
  const data = block.provider?.["openai"];
  return data !== null && typeof data === "object" && !Array.isArray(data) ? (data as OpenAIBlockData) : {};
}

/**
 * Maps neutral messages to Responses API input items. Assistant text keeps its output item id when it
 * has one (OpenAI requires a reasoning item to be followed by the item that followed it); thinking
 * blocks that did not come from OpenAI, and redacted thinking, are dropped: OpenAI cannot read them.
 * A tool result flagged `isError` is sent with an `Error: ` prefix (the API has no error flag).
 */
export function toOpenAIInput(messages: Message[]): InputItem[] {
  const items: InputItem[] = [];
  for (const message of messages) {
    if (message.role === "user") {
      items.push({ role: "user", content: typeof message.content === "string" ? message.content : message.content.map(toOpenAIUserPart) });
    } else if (message.role === "tool") {
      for (const r of message.content)
        items.push({ type: "function_call_output", call_id: r.toolUseId, output: r.isError ? `Error: ${r.content}` : r.content });
    } else {
      for (const block of message.content) {
        const data = openaiData(block);
        if (block.type === "text") {
          const last = items[items.length - 1];
          if (data.itemId && last && "type" in last && last.type === "message" && "id" in last && last.id === data.itemId && last.role === "assistant") {
            (last as OpenAI.Responses.ResponseOutputMessage).content.push({ type: "output_text", text: block.text, annotations: [] });
          } else if (data.itemId) {
            items.push({
              type: "message",
              role: "assistant",
              id: data.itemId,
              status: "completed",
              content: [{ type: "output_text", text: block.text, annotations: [] }],
            });
          } else {
            items.push({ role: "assistant", content: block.text });
          }
        } else if (block.type === "tool_use") {
          const call: OpenAI.Responses.ResponseFunctionToolCall = {
            type: "function_call",
            call_id: block.id,
            name: block.name,
            arguments: typeof block.input === "string" ? block.input : JSON.stringify(block.input),
          };
          if (data.itemId) call.id = data.itemId;
          items.push(call);
        } else if (block.type === "hosted_tool") {
          // A hosted tool's item goes back verbatim; one from another provider is left out.
          const item = block.provider["openai"];
          if (item !== null && typeof item === "object" && !Array.isArray(item) && item["item"]) items.push(item["item"] as unknown as InputItem);
        } else if (block.type === "thinking" && data.itemId) {
          const reasoning: OpenAI.Responses.ResponseReasoningItem = {
            type: "reasoning",
            id: data.itemId,
            summary: (data.summary ?? (block.thinking ? [block.thinking] : [])).map((text) => ({ type: "summary_text" as const, text })),
          };
          if (block.signature) reasoning.encrypted_content = block.signature;
          items.push(reasoning);
        }
      }
    }
  }
  return items;
}

/** A user block as a Responses input part: `input_text`, `input_image` or `input_file`. */
function toOpenAIUserPart(block: UserBlock): OpenAI.Responses.ResponseInputContent {
  if (block.type === "text") return { type: "input_text", text: block.text };
  if (block.type === "image") {
    const source = block.source;
    const detail = block.detail ?? "auto";
    if (source.type === "base64") return { type: "input_image", detail, image_url: `data:${source.mediaType};base64,${source.data}` };
    if (source.type === "url") return { type: "input_image", detail, image_url: source.url };
    return { type: "input_image", detail, file_id: source.fileId };
  }
  const source = block.source;
  const named = block.filename ? { filename: block.filename } : {};
  if (source.type === "base64") return { type: "input_file", filename: block.filename ?? "file", file_data: `data:${source.mediaType};base64,${source.data}` };
  if (source.type === "url") return { type: "input_file", ...named, file_url: source.url };
  return { type: "input_file", ...named, file_id: source.fileId };
}

function toOpenAIToolChoice(choice: ToolChoice): CreateParams["tool_choice"] {
  return typeof choice === "string" ? choice : { type: "function", name: choice.name };
}

/** Builds the `responses.create` parameters for a neutral request. */
export function toOpenAIParams(request: ModelRequest, options: { model: string; params?: Record<string, unknown> }): CreateParams {
  const params: CreateParams = { ...(options.params as Partial<CreateParams>), model: options.model, input: toOpenAIInput(request.messages) };
  if (request.system !== undefined) params.instructions = request.system;
  if (request.maxTokens !== undefined) params.max_output_tokens = request.maxTokens;
  if (request.temperature !== undefined) params.temperature = request.temperature;
  if (request.tools?.length) {
    params.tools = request.tools.map((t) => ({
      type: "function" as const,
      name: t.name,
      description: t.description,
      parameters: t.inputSchema,
      strict: false,
    }));
  }
  const hosted = request.providerTools?.openai;
  if (hosted?.length) params.tools = [...(params.tools ?? []), ...(hosted as unknown as OpenAI.Responses.Tool[])];
  if (request.toolChoice !== undefined) params.tool_choice = toOpenAIToolChoice(request.toolChoice);
  const format = request.responseFormat;
  if (format) {
    params.text = {
      ...params.text,
      format: {
        type: "json_schema",
        name: format.name,
        schema: format.schema,
        strict: false,
        ...(format.description ? { description: format.description } : {}),
      },
    };
  }
  return params;
}

function parseArguments(text: string): JsonValue {
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    return text; // invalid JSON from the model: the tool layer reports it back as a tool error
  }
}

/**
 * A hosted tool's output item (`web_search_call`, `file_search_call`, `code_interpreter_call`, …) as a
 * `hosted_tool` block: call and result in one, the item kept verbatim to be sent back.
 */
function hostedBlock(item: Record<string, unknown>): ContentBlock {
  const input = item["action"] ?? item["queries"] ?? item["code"] ?? item["arguments"];
  const output = item["results"] ?? item["outputs"] ?? item["output"] ?? item["result"];
  const block: ContentBlock = {
    type: "hosted_tool",
    name: String(item["name"] ?? String(item["type"]).replace(/_call$/, "")),
    phase: "call+result",
    provider: { openai: { item: toJson(item) } },
  };
  if (typeof item["id"] === "string") block.id = item["id"];
  if (input !== undefined && input !== null) block.input = toJson(input);
  if (output !== undefined && output !== null) block.output = toJson(output);
  return block;
}

/**
 * Maps a Responses API `Response` to a neutral response. Items of provider-hosted tools become
 * `hosted_tool` blocks; with `keepRaw` the whole response is kept in `raw`.
 */
export function fromOpenAIResponse(response: OpenAIResponse, keepRaw = true): ModelResponse {
  const content: ContentBlock[] = [];
  let refused = false;
  for (const item of response.output) {
    if (item.type !== "message" && item.type !== "function_call" && item.type !== "reasoning")
      content.push(hostedBlock(item as unknown as Record<string, unknown>));
    else if (item.type === "message") {
      for (const part of item.content) {
        if (part.type === "output_text") content.push({ type: "text", text: part.text, provider: { openai: { itemId: item.id } } });
        else if (part.type === "refusal") {
          refused = true;
          content.push({ type: "text", text: part.refusal, provider: { openai: { itemId: item.id } } });
        }
      }
    } else if (item.type === "function_call") {
      const block: ContentBlock = { type: "tool_use", id: item.call_id, name: item.name, input: parseArguments(item.arguments) };
      if (item.id) block.provider = { openai: { itemId: item.id } };
      content.push(block);
    } else if (item.type === "reasoning") {
      const summary = item.summary.map((s) => s.text);
      const block: ContentBlock = { type: "thinking", thinking: summary.join("\n\n"), provider: { openai: { itemId: item.id, summary } } };
      if (item.encrypted_content) block.signature = item.encrypted_content;
      content.push(block);
    }
  }
  const reason = response.incomplete_details?.reason;
  let stopReason: StopReason;
  if (reason === "max_output_tokens") stopReason = "max_tokens";
  else if (reason === "content_filter" || refused) stopReason = "refusal";
  else if (content.some((b) => b.type === "tool_use")) stopReason = "tool_use";
  else if (response.status === "completed") stopReason = "end_turn";
  else stopReason = "other";
  const u = response.usage;
  const cached = count(u?.input_tokens_details?.cached_tokens);
  return makeResponse({
    content,
    stopReason,
    rawStopReason: reason ?? response.status,
    usage: {
      inputTokens: Math.max(0, count(u?.input_tokens) - cached),
      outputTokens: count(u?.output_tokens),
      cacheReadTokens: cached,
      cacheWriteTokens: 0,
      reasoningTokens: count(u?.output_tokens_details?.reasoning_tokens),
    },
    model: response.model,
    id: response.id,
    raw: keepRaw ? response : {},
  });
}
