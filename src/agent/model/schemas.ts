/**
 * The provider-neutral wire shapes of the model layer, as zod schemas shared at every boundary
 * (journal payloads, HTTP API, the agent loop). Everything here is plain JSON: it is journaled.
 */
import { z } from "zod";

/** A JSON value: what a journal entry can carry without tagging. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** Schema of {@link JsonValue}. */
export const JsonValueSchema: z.ZodType<JsonValue> = z.lazy(() =>
  z.union([z.null(), z.boolean(), z.number(), z.string(), z.array(JsonValueSchema), z.record(z.string(), JsonValueSchema)]),
);

/**
 * Provider-specific data a block must carry to be sent back to the same provider unchanged,
 * keyed by provider (`openai`, `ai-sdk`…): e.g. an OpenAI reasoning item's id, or an AI SDK
 * part's `providerMetadata`. Opaque to Cairn; adapters for other providers ignore it.
 */
export const ProviderDataSchema = z.record(z.string(), JsonValueSchema);
/** See {@link ProviderDataSchema}. */
export type ProviderData = z.infer<typeof ProviderDataSchema>;

/** Plain text, from the user or the model. */
export const TextBlockSchema = z.object({ type: z.literal("text"), text: z.string(), provider: ProviderDataSchema.optional() });
/** Plain text, from the user or the model. */
export type TextBlock = z.infer<typeof TextBlockSchema>;

/**
 * A tool call the model made. `id` is the provider's call id (Anthropic `toolu_…`, OpenAI `call_…`);
 * `input` is the parsed arguments, or the raw argument string when the model produced invalid JSON
 * (the tool layer reports that back to the model as a tool error).
 */
export const ToolUseBlockSchema = z.object({
  type: z.literal("tool_use"),
  id: z.string().min(1),
  name: z.string().min(1),
  input: JsonValueSchema,
  provider: ProviderDataSchema.optional(),
});
/** See {@link ToolUseBlockSchema}. */
export type ToolUseBlock = z.infer<typeof ToolUseBlockSchema>;

/**
 * The model's visible reasoning. `signature` must be sent back byte-for-byte with the next request
 * (Anthropic verifies it; for OpenAI it holds the reasoning item's `encrypted_content` when present).
 */
export const ThinkingBlockSchema = z.object({
  type: z.literal("thinking"),
  thinking: z.string(),
  signature: z.string().optional(),
  provider: ProviderDataSchema.optional(),
});
/** See {@link ThinkingBlockSchema}. */
export type ThinkingBlock = z.infer<typeof ThinkingBlockSchema>;

/** Reasoning the provider encrypted; `data` is opaque and must be sent back unchanged. */
export const RedactedThinkingBlockSchema = z.object({
  type: z.literal("redacted_thinking"),
  data: z.string(),
  provider: ProviderDataSchema.optional(),
});
/** See {@link RedactedThinkingBlockSchema}. */
export type RedactedThinkingBlock = z.infer<typeof RedactedThinkingBlockSchema>;

/**
 * A call of a provider-hosted tool (OpenAI `web_search_call`, `file_search_call`,
 * `code_interpreter_call`; Anthropic `server_tool_use` and its `*_tool_result`; an AI SDK
 * provider-executed tool call or result), which the provider ran itself. `name` is the tool,
 * `phase` says whether the block is the call, its result, or both in one (OpenAI items); `input` and
 * `output` are what the provider reported, for views. `provider` holds the provider's item verbatim:
 * it is sent back unchanged on the next turn, so the conversation stays valid for that provider
 * (other providers leave it out).
 */
export const HostedToolBlockSchema = z.object({
  type: z.literal("hosted_tool"),
  name: z.string(),
  id: z.string().optional(),
  phase: z.enum(["call", "result", "call+result"]),
  input: JsonValueSchema.optional(),
  output: JsonValueSchema.optional(),
  provider: ProviderDataSchema,
});
/** See {@link HostedToolBlockSchema}. */
export type HostedToolBlock = z.infer<typeof HostedToolBlockSchema>;

/** Any block a model may return. */
export const ContentBlockSchema = z.discriminatedUnion("type", [
  TextBlockSchema,
  ToolUseBlockSchema,
  ThinkingBlockSchema,
  RedactedThinkingBlockSchema,
  HostedToolBlockSchema,
]);
/** Any block a model may return: text, tool_use, thinking, redacted_thinking or hosted_tool. */
export type ContentBlock = z.infer<typeof ContentBlockSchema>;

/** The outcome of one tool call, sent back to the model. `toolUseId` is the {@link ToolUseBlock.id}. */
export const ToolResultSchema = z.object({
  type: z.literal("tool_result"),
  toolUseId: z.string().min(1),
  content: z.string(),
  isError: z.boolean().optional(),
});
/** See {@link ToolResultSchema}. */
export type ToolResult = z.infer<typeof ToolResultSchema>;

/** Image media types every adapter can send. */
export const IMAGE_MEDIA_TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp"] as const;

const base64 = z
  .string()
  .min(1, "is empty")
  .regex(/^[A-Za-z0-9+/]+={0,2}$/, "must be plain base64 (no data: prefix, no line breaks)");
const mediaType = z.string().regex(/^[a-z]+\/[a-z0-9.+-]+$/i, 'must be a media type such as "application/pdf"');
const url = z
  .string()
  .url("must be an absolute URL")
  .refine((text) => /^https?:/i.test(text), "must be an http(s) URL (send local bytes as base64)");
const fileId = z.object({
  type: z.literal("file_id"),
  /** The id the provider's file API gave the upload (`file-…` at OpenAI, `file_…` at Anthropic). */
  fileId: z.string().min(1),
  mediaType: mediaType.optional(),
});

/**
 * An image in a user turn: base64 bytes with their media type, a URL the provider fetches, or the id
 * of a file uploaded to the provider's file API. Mapped to OpenAI `input_image`, Anthropic `image`
 * and an AI SDK `file` part with an `image/*` media type.
 */
export const ImageBlockSchema = z.object({
  type: z.literal("image"),
  source: z.discriminatedUnion("type", [
    z.object({
      type: z.literal("base64"),
      mediaType: z.enum(IMAGE_MEDIA_TYPES, { error: `must be one of ${IMAGE_MEDIA_TYPES.join(", ")}` }),
      data: base64,
    }),
    z.object({ type: z.literal("url"), url }),
    fileId,
  ]),
  /** OpenAI's `detail` (`low`, `high`, `auto`); other providers ignore it. */
  detail: z.enum(["low", "high", "auto"]).optional(),
});
/** See {@link ImageBlockSchema}. */
export type ImageBlock = z.infer<typeof ImageBlockSchema>;

/**
 * A file (document) in a user turn, e.g. a PDF: base64 bytes with their media type, a URL, or a
 * provider file id. Mapped to OpenAI `input_file`, Anthropic `document` (PDF and plain text only) and
 * an AI SDK `file` part. A provider that cannot take the media type is refused before sending.
 */
export const FileBlockSchema = z.object({
  type: z.literal("file"),
  source: z.discriminatedUnion("type", [
    z.object({ type: z.literal("base64"), mediaType, data: base64 }),
    z.object({ type: z.literal("url"), url, mediaType: mediaType.optional() }),
    fileId,
  ]),
  /** The file's name, sent where the provider takes one. */
  filename: z.string().min(1).max(255).optional(),
});
/** See {@link FileBlockSchema}. */
export type FileBlock = z.infer<typeof FileBlockSchema>;

/** What a user turn may hold: text, images and files. */
export const UserBlockSchema = z.discriminatedUnion("type", [TextBlockSchema, ImageBlockSchema, FileBlockSchema]);
/** See {@link UserBlockSchema}. */
export type UserBlock = z.infer<typeof UserBlockSchema>;

/** A user turn: a string, or text, image and file blocks. */
export const UserMessageSchema = z.object({ role: z.literal("user"), content: z.union([z.string(), z.array(UserBlockSchema).min(1)]) });
/** A model turn, with every block it returned (thinking blocks included, signatures intact). */
export const AssistantMessageSchema = z.object({ role: z.literal("assistant"), content: z.array(ContentBlockSchema) });
/** The results of the tool calls of the preceding assistant turn. */
export const ToolMessageSchema = z.object({ role: z.literal("tool"), content: z.array(ToolResultSchema).min(1) });
/** One message of a conversation. */
export const MessageSchema = z.discriminatedUnion("role", [UserMessageSchema, AssistantMessageSchema, ToolMessageSchema]);
/** A user turn. */
export type UserMessage = z.infer<typeof UserMessageSchema>;
/** A model turn. */
export type AssistantMessage = z.infer<typeof AssistantMessageSchema>;
/** Tool results for the preceding assistant turn. */
export type ToolMessage = z.infer<typeof ToolMessageSchema>;
/** One provider-neutral message: `user`, `assistant` or `tool`. */
export type Message = z.infer<typeof MessageSchema>;

/** A tool the model may call. `inputSchema` is a JSON Schema object (e.g. from `z.toJSONSchema`). */
export const ToolSpecSchema = z.object({
  name: z
    .string()
    .min(1)
    .max(64)
    .regex(/^[a-zA-Z0-9_-]+$/, "tool names may use letters, digits, _ and - only"),
  description: z.string(),
  inputSchema: z.record(z.string(), JsonValueSchema),
});
/** See {@link ToolSpecSchema}. */
export type ToolSpec = z.infer<typeof ToolSpecSchema>;

/** Which tool the model must call: any it likes (`auto`), none, at least one (`required`), or a named one. */
export const ToolChoiceSchema = z.union([z.enum(["auto", "none", "required"]), z.object({ name: z.string().min(1) })]);
/** See {@link ToolChoiceSchema}. */
export type ToolChoice = z.infer<typeof ToolChoiceSchema>;

/** Why the model stopped, normalized across providers. `other` carries the raw reason in `ModelResponse.rawStopReason`. */
export const StopReasonSchema = z.enum(["end_turn", "tool_use", "max_tokens", "stop_sequence", "refusal", "other"]);
/** See {@link StopReasonSchema}. */
export type StopReason = z.infer<typeof StopReasonSchema>;

const tokens = z.number().int().nonnegative();

/**
 * Tokens of one call, by how they are billed. The kinds are disjoint except `reasoningTokens`:
 * - `inputTokens`: prompt tokens read fresh (not from, and not written to, a cache);
 * - `cacheReadTokens` / `cacheWriteTokens`: prompt tokens read from / written to the provider's cache;
 * - `outputTokens`: every generated token, reasoning included (reasoning is billed as output);
 * - `reasoningTokens`: the part of `outputTokens` spent on reasoning, for information only.
 *
 * The whole prompt is `inputTokens + cacheReadTokens + cacheWriteTokens`.
 */
export const UsageSchema = z.object({
  inputTokens: tokens,
  outputTokens: tokens,
  cacheReadTokens: tokens,
  cacheWriteTokens: tokens,
  reasoningTokens: tokens,
});
/** See {@link UsageSchema}. */
export type Usage = z.infer<typeof UsageSchema>;

/** The JSON part of a model request (everything but the abort signal). */
/** A JSON-schema answer format: the provider is asked to answer with JSON matching `schema`. */
export const ResponseFormatSchema = z.object({
  /** A name for the format (letters, digits, `_` and `-`, at most 64), sent where the provider wants one. */
  name: z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, "letters, digits, _ and -, 1 to 64 of them"),
  description: z.string().optional(),
  /** A JSON Schema object. */
  schema: z.record(z.string(), z.unknown()),
});
/** See {@link ResponseFormatSchema}. */
export type ResponseFormat = z.infer<typeof ResponseFormatSchema>;

/**
 * Provider-hosted tools to offer the model, by adapter (`openai`, `anthropic`, `ai-sdk`), each passed
 * through as given: e.g. `{ openai: [{ type: "web_search" }], anthropic: [{ type: "web_search_20250305",
 * name: "web_search", max_uses: 3 }] }`. An adapter sends only its own list, so one request can serve a
 * primary and a fallback on different providers.
 */
export const ProviderToolsSchema = z.object({
  openai: z.array(z.record(z.string(), JsonValueSchema)).optional(),
  anthropic: z.array(z.record(z.string(), JsonValueSchema)).optional(),
  "ai-sdk": z.array(z.record(z.string(), JsonValueSchema)).optional(),
});
/** See {@link ProviderToolsSchema}. */
export type ProviderTools = z.infer<typeof ProviderToolsSchema>;

export const ModelRequestSchema = z.object({
  messages: z.array(MessageSchema),
  system: z.string().optional(),
  tools: z.array(ToolSpecSchema).optional(),
  toolChoice: ToolChoiceSchema.optional(),
  maxTokens: z.number().int().positive().optional(),
  temperature: z.number().min(0).max(2).optional(),
  responseFormat: ResponseFormatSchema.optional(),
  providerTools: ProviderToolsSchema.optional(),
});

/** What a model returned, as journaled. */
export const ModelResponseSchema = z.object({
  content: z.array(ContentBlockSchema),
  toolCalls: z.array(ToolUseBlockSchema),
  stopReason: StopReasonSchema,
  rawStopReason: z.string().optional(),
  usage: UsageSchema,
  model: z.string(),
  id: z.string().optional(),
  raw: JsonValueSchema,
});
