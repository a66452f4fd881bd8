/**
 * Reads an AI SDK `doStream` result: reports text, reasoning and tool-input deltas as they come and
 * assembles the same result `doGenerate` returns (content in order, finish reason and usage from the
 * final `finish` part), so one mapping turns both into a neutral response.
 */
import type { LanguageModelV2Content } from "@ai-sdk/provider";
import type { GenerateResult } from "./ai-sdk-mapping.js";
import type { ModelDelta } from "./model.js";

/** A stream part of any supported specification version, reduced to the fields read here. */
interface StreamPart {
  type: string;
  id?: string;
  delta?: string;
  toolName?: string;
  providerMetadata?: Record<string, Record<string, unknown>>;
  [key: string]: unknown;
}

type Part = LanguageModelV2Content & { providerMetadata?: Record<string, Record<string, unknown>> };

/** Consumes the stream; rejects on an `error` part or an end without `finish`. */
export async function readAiSdkStream(stream: ReadableStream<unknown>, emit: (delta: ModelDelta) => void): Promise<GenerateResult> {
  const content: Part[] = [];
  const open = new Map<string, Part & { text: string }>();
  const toolNames = new Map<string, string>();
  const result: Partial<GenerateResult> = {};
  const response: NonNullable<GenerateResult["response"]> = {};
  const reader = stream.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      const part = value as StreamPart;
      switch (part.type) {
        case "stream-start":
          result.warnings = part["warnings"] as unknown[];
          break;
        case "response-metadata":
          if (typeof part["id"] === "string") response.id = part["id"];
          if (typeof part["modelId"] === "string") response.modelId = part["modelId"];
          if (part["timestamp"] instanceof Date) response.timestamp = part["timestamp"];
          break;
        case "text-start":
        case "reasoning-start": {
          const block = { type: part.type === "text-start" ? "text" : "reasoning", text: "" } as Part & { text: string };
          if (part.providerMetadata) block.providerMetadata = part.providerMetadata;
          open.set(`${block.type}:${part.id}`, block);
          content.push(block);
          break;
        }
        case "text-delta":
        case "reasoning-delta": {
          const kind = part.type === "text-delta" ? "text" : "reasoning";
          let block = open.get(`${kind}:${part.id}`);
          if (!block) {
            // A provider that sends deltas without a start part.
            block = { type: kind, text: "" } as Part & { text: string };
            open.set(`${kind}:${part.id}`, block);
            content.push(block);
          }
          block.text += part.delta ?? "";
          if (part.providerMetadata) block.providerMetadata = merge(block.providerMetadata, part.providerMetadata);
          emit({ kind: kind === "text" ? "text" : "thinking", text: part.delta ?? "" });
          break;
        }
        case "text-end":
        case "reasoning-end": {
          const block = open.get(`${part.type === "text-end" ? "text" : "reasoning"}:${part.id}`);
          if (block && part.providerMetadata) block.providerMetadata = merge(block.providerMetadata, part.providerMetadata);
          break;
        }
        case "tool-input-start":
          toolNames.set(part.id ?? "", part.toolName ?? "");
          break;
        case "tool-input-delta":
          emit({ kind: "tool-input", id: part.id ?? "", name: toolNames.get(part.id ?? "") ?? "", text: part.delta ?? "" });
          break;
        case "tool-call":
        case "tool-result":
        case "file":
        case "source": {
          const { type: _type, ...rest } = part;
          content.push({ type: part.type, ...rest } as unknown as Part);
          break;
        }
        case "finish":
          result.finishReason = part["finishReason"] as GenerateResult["finishReason"];
          result.usage = part["usage"] as GenerateResult["usage"];
          if (part.providerMetadata) result.providerMetadata = part.providerMetadata;
          break;
        case "error":
          throw part["error"] instanceof Error ? part["error"] : Object.assign(new Error(describe(part["error"])), { error: part["error"] });
      }
    }
  } catch (error) {
    await reader.cancel().catch(() => undefined);
    throw error;
  } finally {
    reader.releaseLock();
  }
  if (result.finishReason === undefined || result.usage === undefined)
    throw new Error("The AI SDK stream ended before its finish part (the connection was cut).");
  return { ...result, content, response } as GenerateResult;
}

function merge(a: Part["providerMetadata"], b: NonNullable<Part["providerMetadata"]>): NonNullable<Part["providerMetadata"]> {
  const out: NonNullable<Part["providerMetadata"]> = { ...a };
  for (const [key, value] of Object.entries(b)) out[key] = { ...out[key], ...value };
  return out;
}

function describe(error: unknown): string {
  if (error && typeof error === "object" && "message" in error && typeof error.message === "string") return error.message;
  try {
    return `The provider's stream reported an error: ${JSON.stringify(error)}`;
  } catch {
    return "The provider's stream reported an error.";
  }
}
