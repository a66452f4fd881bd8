/**
 * Reads an OpenAI Responses stream (`responses.create({ stream: true })`): reports text, reasoning
 * summary and function-call argument deltas as they come, and returns the complete `Response` of
 * the final `response.completed` (or `response.incomplete`) event, which carries the usage.
 */
import type OpenAI from "openai";
import type { ModelDelta } from "./model.js";

type Event = OpenAI.Responses.ResponseStreamEvent;

/** Consumes the stream; rejects on `response.failed`, an `error` event, or an end without a final response. */
export async function readOpenAIStream(events: AsyncIterable<Event>, emit: (delta: ModelDelta) => void): Promise<OpenAI.Responses.Response> {
  const calls = new Map<string, { id: string; name: string }>();
  for await (const event of events) {
    switch (event.type) {
      case "response.output_text.delta":
        emit({ kind: "text", text: event.delta });
        break;
      case "response.reasoning_summary_text.delta":
      case "response.reasoning_text.delta":
        emit({ kind: "thinking", text: event.delta });
        break;
      case "response.output_item.added":
        if (event.item.type === "function_call") calls.set(event.item.id ?? "", { id: event.item.call_id, name: event.item.name });
        break;
      case "response.function_call_arguments.delta": {
        const call = calls.get(event.item_id);
        emit({ kind: "tool-input", id: call?.id ?? event.item_id, name: call?.name ?? "", text: event.delta });
        break;
      }
      case "response.completed":
      case "response.incomplete":
        return event.response;
      case "response.failed":
        throw Object.assign(new Error(event.response.error?.message ?? "The response failed."), { error: event.response.error });
      case "error":
        throw Object.assign(new Error(event.message), { error: { message: event.message, code: event.code } });
    }
  }
  throw new Error("The OpenAI stream ended before response.completed (the connection was cut).");
}
