/**
 * Helpers over neutral messages and responses shared by the adapters and the agent loop.
 */
import { ValidationError } from "../../core/errors.js";
import type { ModelRequest, ModelResponse } from "./model.js";
import {
  ModelRequestSchema,
  type ContentBlock,
  type JsonValue,
  type Message,
  type TextBlock,
  type UserBlock,
  type StopReason,
  type ToolUseBlock,
  type Usage,
} from "./schemas.js";

/** A usage with every count at zero. */
export function emptyUsage(): Usage {
  return { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 };
}

/** The sum of two usages, kind by kind. */
export function addUsage(a: Usage, b: Usage): Usage {
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    cacheReadTokens: a.cacheReadTokens + b.cacheReadTokens,
    cacheWriteTokens: a.cacheWriteTokens + b.cacheWriteTokens,
    reasoningTokens: a.reasoningTokens + b.reasoningTokens,
  };
}

/** The `tool_use` blocks of `content`, in order. */
export function toolCallsOf(content: ContentBlock[]): ToolUseBlock[] {
  return content.filter((block): block is ToolUseBlock => block.type === "tool_use");
}

/** The text blocks of `content`, joined with newlines (images and files are left out). */
export function textOf(content: readonly (ContentBlock | UserBlock)[] | string): string {
  if (typeof content === "string") return content;
  return content
    .filter((block): block is TextBlock => block.type === "text")
    .map((block) => block.text)
    .join("\n");
}

/** A deep copy of `value` that survives `JSON.stringify` unchanged (Dates become ISO strings, undefined keys vanish). */
export function toJson(value: unknown): JsonValue {
  if (value === undefined) return null;
  return JSON.parse(JSON.stringify(value, (_key, v: unknown) => (typeof v === "bigint" ? v.toString() : v))) as JsonValue;
}

/** Counts of zero or more clamp to a non-negative integer (providers sometimes send null). */
export function count(value: number | null | undefined): number {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? Math.floor(value) : 0;
}

/** Builds a {@link ModelResponse}: derives `toolCalls`, and `tool_use` as the stop reason when the provider said nothing better. */
export function makeResponse(fields: {
  content: ContentBlock[];
  stopReason: StopReason;
  rawStopReason?: string | null | undefined;
  usage: Usage;
  model: string;
  id?: string | null | undefined;
  raw: unknown;
}): ModelResponse {
  const response: ModelResponse = {
    content: fields.content,
    toolCalls: toolCallsOf(fields.content),
    stopReason: fields.stopReason,
    usage: fields.usage,
    model: fields.model,
    raw: toJson(fields.raw),
  };
  if (fields.rawStopReason) response.rawStopReason = fields.rawStopReason;
  if (fields.id) response.id = fields.id;
  return response;
}

/**
 * Validates a request's JSON part (messages, tools, options) and returns it unchanged.
 * @throws ValidationError naming the first bad field.
 */
export function checkRequest(request: ModelRequest): ModelRequest {
  const parsed = ModelRequestSchema.safeParse({ ...request, signal: undefined });
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const { path, message } = issue ? deepestIssue(issue) : { path: [], message: "invalid" };
    throw new ValidationError(`Invalid model request at ${path.join(".") || "(root)"}: ${message}.`);
  }
  return request;
}

interface IssueLike {
  path: PropertyKey[];
  message: string;
  code?: string;
  errors?: IssueLike[][];
}

/**
 * The most specific problem behind a union's "Invalid input": the branch that got furthest into the
 * value (a user turn's blocks rather than "not a string"), so the error names the bad field.
 */
function deepestIssue(issue: IssueLike, prefix: PropertyKey[] = []): { path: PropertyKey[]; message: string } {
  const path = [...prefix, ...issue.path];
  if (issue.code !== "invalid_union" || !issue.errors?.length) return { path, message: issue.message };
  let best: { path: PropertyKey[]; message: string } | undefined;
  for (const branch of issue.errors) {
    const first = branch[0];
    if (!first) continue;
    const candidate = deepestIssue(first, path);
    if (!best || candidate.path.length > best.path.length) best = candidate;
  }
  return best ?? { path, message: issue.message };
}

/** One thing wrong with a transcript, as found by {@link transcriptProblems}. */
export interface TranscriptProblem {
  /** Index of the offending message. */
  index: number;
  /** What is wrong, in words. */
  problem: string;
}

/**
 * Checks the rules every provider enforces on a conversation: it starts with a user message;
 * every `tool_use` of an assistant turn has exactly one result in the `tool` message right after it,
 * and no result answers a call that was not made; a `tool` message follows an assistant turn with
 * tool calls. Returns the problems found (empty when the transcript is valid).
 */
export function transcriptProblems(messages: Message[]): TranscriptProblem[] {
  const problems: TranscriptProblem[] = [];
  if (messages.length > 0 && messages[0]?.role !== "user") problems.push({ index: 0, problem: `the first message is "${messages[0]?.role}", not "user"` });
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i]!;
    if (message.role === "assistant") {
      const calls = toolCallsOf(message.content);
      const next = messages[i + 1];
      if (calls.length === 0) continue;
      if (next === undefined) continue; // the last turn's calls are still being run
      if (next.role !== "tool") {
        problems.push({ index: i + 1, problem: `tool calls ${calls.map((c) => c.id).join(", ")} have no results: the next message is "${next.role}"` });
        continue;
      }
      const answered = new Map<string, number>();
      for (const result of next.content) answered.set(result.toolUseId, (answered.get(result.toolUseId) ?? 0) + 1);
      for (const call of calls) {
        const n = answered.get(call.id) ?? 0;
        if (n !== 1) problems.push({ index: i + 1, problem: `tool call ${call.id} (${call.name}) has ${n} results, expected exactly 1` });
        answered.delete(call.id);
      }
      for (const stray of answered.keys()) problems.push({ index: i + 1, problem: `tool result for ${stray} answers no call of the preceding assistant turn` });
    } else if (message.role === "tool") {
      const previous = messages[i - 1];
      if (previous?.role !== "assistant" || toolCallsOf(previous.content).length === 0)
        problems.push({ index: i, problem: "a tool message must follow an assistant turn that made tool calls" });
    }
  }
  return problems;
}
