/**
 * The provider-neutral model contract. Every adapter (Anthropic, OpenAI, Vercel AI SDK, scripted)
 * implements {@link Model}; the agent loop only ever sees this interface.
 */
import type { z } from "zod";
import type {
  ContentBlock,
  JsonValue,
  Message,
  ResponseFormat,
  StopReason,
  ToolChoice,
  ToolSpec,
  ToolUseBlock,
  Usage,
  ModelResponseSchema,
  ProviderTools,
} from "./schemas.js";

/**
 * One call to a model.
 *
 * @example
 * ```ts
 * const res = await model.generate({
 *   system: "You are terse.",
 *   messages: [{ role: "user", content: "What is 2+2?" }],
 *   tools: [{ name: "calc", description: "Evaluate arithmetic", inputSchema: { type: "object", properties: { expr: { type: "string" } } } }],
 *   maxTokens: 1024,
 * });
 * ```
 */
export interface ModelRequest {
  /** The conversation so far: user, assistant and tool messages, oldest first. */
  messages: Message[];
  /** The system prompt. */
  system?: string;
  /** Tools the model may call. */
  tools?: ToolSpec[];
  /** Whether and which tool the model must call. Default: `auto` when tools are given. */
  toolChoice?: ToolChoice;
  /** Upper bound on generated tokens (reasoning included). Adapters fill a default when absent. */
  maxTokens?: number;
  /** Sampling temperature, 0–2 (providers clamp to their own range). */
  temperature?: number;
  /**
   * Ask for a JSON answer matching a JSON Schema (OpenAI `text.format` json_schema, Anthropic
   * `output_config.format`, AI SDK `responseFormat`). See `generateObject` for validation and retries.
   */
  responseFormat?: ResponseFormat;
  /**
   * Provider-hosted tools (web search, file search, code interpreter…), by adapter, passed through as
   * given. The provider runs them; their calls and results come back as `hosted_tool` blocks.
   */
  providerTools?: ProviderTools;
  /** Aborts the HTTP request. Not journaled. */
  signal?: AbortSignal;
  /**
   * Called with each piece of the response's text as the model produces it, for live display. Not
   * journaled: the response `generate` resolves with is the source of truth. Adapters that do not
   * stream ignore it; {@link ScriptedModel} calls it with its text word by word.
   */
  onTextDelta?: (text: string) => void;
  /**
   * Called with each piece of the response as the model produces it: text, thinking, and tool-call
   * arguments. Given this (or `onTextDelta`), the provider adapters stream the response instead of
   * waiting for it whole. Not journaled, like `onTextDelta`.
   */
  onDelta?: (delta: ModelDelta) => void;
}

/**
 * A piece of a response as it streams: `text` and `thinking` (reasoning, or its summary) carry the
 * new characters; `tool-input` carries new characters of the JSON arguments of tool call `id`.
 */
export type ModelDelta = { kind: "text"; text: string } | { kind: "thinking"; text: string } | { kind: "tool-input"; id: string; name: string; text: string };

/** What a model returned. Plain JSON: it is journaled as the model step's result. */
export interface ModelResponse {
  /** Every block the model produced, in order (text, tool_use, thinking, redacted_thinking). */
  content: ContentBlock[];
  /** The `tool_use` blocks of `content`, in order. */
  toolCalls: ToolUseBlock[];
  /** Why the model stopped, normalized. */
  stopReason: StopReason;
  /** The provider's own stop reason, when it had one. */
  rawStopReason?: string;
  /** Token usage of this call. */
  usage: Usage;
  /** The model id the provider reports having used (may carry a date suffix). */
  model: string;
  /** The provider's response id, when it has one. */
  id?: string;
  /** The provider's response, made JSON-safe (dates as ISO strings). For debugging and audits. */
  raw: JsonValue;
}

/** A language model behind a provider-neutral interface. */
export interface Model {
  /** The provider: `anthropic`, `openai`, `ai-sdk:<provider>` or `scripted`. */
  readonly provider: string;
  /** The model id requests are sent with, and the key into the price table. */
  readonly modelId: string;
  /**
   * Sends one request and returns the complete response; with `onDelta`/`onTextDelta` the adapters
   * stream it and report its pieces as they come, then resolve with the same complete response.
   * Rejects with the provider SDK's error on transport or API failures (the step's retry policy
   * decides what to do), and with a `ValidationError` when the request itself is malformed.
   */
  generate(request: ModelRequest): Promise<ModelResponse>;
}

// Keeps the hand-written interface and the schema in lockstep: this line fails to compile if they drift.
type _SchemaMatches =
  ModelResponse extends z.infer<typeof ModelResponseSchema> ? (z.infer<typeof ModelResponseSchema> extends ModelResponse ? true : never) : never;
const _schemaMatches: _SchemaMatches = true;
void _schemaMatches;
