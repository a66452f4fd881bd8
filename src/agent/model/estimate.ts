/**
 * Cheap, deterministic token and cost estimates, used before a model call to refuse one that would
 * cross a budget. Not a tokenizer: it errs high, never by much low, for English and code.
 */
import { costOf, type CostOptions } from "./cost.js";
import type { ModelRequest } from "./model.js";
import type { ContentBlock, Message, ToolSpec, UserBlock } from "./schemas.js";

/** Per-item overheads, in tokens: the role and framing tokens providers add around each item. */
const MESSAGE_OVERHEAD = 4;
const BLOCK_OVERHEAD = 8;
const TOOL_OVERHEAD = 16;

/** `max_tokens` assumed when a request does not set one (the Anthropic adapter's default too). */
export const DEFAULT_MAX_OUTPUT_TOKENS = 4096;

/**
 * Tokens in a string: one per 4 ASCII characters (rounded up), plus one per non-ASCII character
 * (CJK and emoji run close to a token per character, so chars/4 alone would undercount them badly).
 */
export function estimateTextTokens(text: string): number {
  let ascii = 0;
  let other = 0;
  for (let i = 0; i < text.length; i++) {
    if (text.charCodeAt(i) < 128) ascii++;
    else other++;
  }
  return Math.ceil(ascii / 4) + other;
}

/** What one image is estimated at. */
const IMAGE_TOKENS = 1_600;
/** What a file known only by URL or id is estimated at (a few pages). */
const FILE_TOKENS = 8_000;

/** Tokens of a list of content blocks, per kind: text, tool call (name + JSON arguments), thinking, redacted thinking. */
export function estimateContentTokens(content: readonly (ContentBlock | UserBlock)[] | string): number {
  if (typeof content === "string") return estimateTextTokens(content);
  let total = 0;
  for (const block of content) {
    switch (block.type) {
      case "text":
        total += estimateTextTokens(block.text);
        break;
      case "tool_use":
        total += BLOCK_OVERHEAD + estimateTextTokens(block.name) + estimateTextTokens(JSON.stringify(block.input));
        break;
      case "thinking":
        total += estimateTextTokens(block.thinking);
        break;
      case "redacted_thinking":
        total += estimateTextTokens(block.data);
        break;
      case "image":
        // Providers bill an image by its pixels, which Cairn does not decode; 1,600 is the most
        // Anthropic bills one (about 1.15 megapixels, larger images are scaled down) and near OpenAI's high detail.
        total += IMAGE_TOKENS;
        break;
      case "file":
        // A document's text and page images; from its size when the bytes are here, else a page-sized guess.
        total += block.source.type === "base64" ? Math.max(IMAGE_TOKENS, Math.ceil((block.source.data.length * 3) / 4 / 3)) : FILE_TOKENS;
        break;
    }
  }
  return total;
}

function messageTokens(message: Message): number {
  if (message.role === "tool") return MESSAGE_OVERHEAD + message.content.reduce((sum, r) => sum + BLOCK_OVERHEAD + estimateTextTokens(r.content), 0);
  return MESSAGE_OVERHEAD + estimateContentTokens(message.content);
}

function toolTokens(tool: ToolSpec): number {
  return TOOL_OVERHEAD + estimateTextTokens(tool.name) + estimateTextTokens(tool.description) + estimateTextTokens(JSON.stringify(tool.inputSchema));
}

/** The estimate of one request. */
export interface TokenEstimate {
  /** Prompt tokens: system, tools and messages. */
  inputTokens: number;
  /** The most the call may generate: the request's `maxTokens`, or the default. */
  maxOutputTokens: number;
}

/**
 * Estimates the prompt size of a request and the most it can generate.
 *
 * @example
 * ```ts
 * estimateTokens({ messages: [{ role: "user", content: "Hello there" }] }); // { inputTokens: 7, maxOutputTokens: 4096 }
 * ```
 */
export function estimateTokens(request: Omit<ModelRequest, "signal">, options: { defaultMaxTokens?: number } = {}): TokenEstimate {
  let input = request.system ? MESSAGE_OVERHEAD + estimateTextTokens(request.system) : 0;
  for (const tool of request.tools ?? []) input += toolTokens(tool);
  for (const message of request.messages) input += messageTokens(message);
  return { inputTokens: input, maxOutputTokens: request.maxTokens ?? options.defaultMaxTokens ?? DEFAULT_MAX_OUTPUT_TOKENS };
}

/**
 * The worst-case cost of a request in integer micro-dollars: the estimated prompt billed as fresh
 * input (no cache discount) plus `maxOutputTokens` of output. A budget check that refuses a call
 * when `spent + estimateCost(…) > ceiling` therefore never lets a call cross it by more than the
 * estimate's error on the prompt.
 * @throws UnknownModelPriceError when the model has no price (see {@link costOf}).
 */
export function estimateCost(modelId: string, request: Omit<ModelRequest, "signal">, options: CostOptions & { defaultMaxTokens?: number } = {}): number {
  const estimate = estimateTokens(request, options);
  return costOf(
    modelId,
    { inputTokens: estimate.inputTokens, outputTokens: estimate.maxOutputTokens, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 },
    options,
  );
}
