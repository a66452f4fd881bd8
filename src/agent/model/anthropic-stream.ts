/**
 * Reads an Anthropic Messages stream (`messages.create({ stream: true })`): reports text, thinking and
 * tool-input deltas as they come and rebuilds the complete `Message` the non-streaming call returns,
 * with the usage of the stream's final `message_delta`.
 */
import type Anthropic from "@anthropic-ai/sdk";
import type { ModelDelta } from "./model.js";

type Event = Anthropic.Messages.RawMessageStreamEvent;
type Block = Anthropic.Messages.ContentBlock;

/** Consumes the stream; rejects when it ends before `message_stop` (a cut connection). */
export async function readAnthropicStream(events: AsyncIterable<Event>, emit: (delta: ModelDelta) => void): Promise<Anthropic.Messages.Message> {
  let message: Anthropic.Messages.Message | undefined;
  const blocks: Block[] = [];
  const json = new Map<number, string>();
  let stopped = false;
  for await (const event of events) {
    switch (event.type) {
      case "message_start":
        message = { ...event.message, content: [] };
        break;
      case "content_block_start":
        blocks[event.index] = { ...event.content_block } as Block;
        if (event.content_block.type === "tool_use" || event.content_block.type === "server_tool_use") json.set(event.index, "");
        break;
      case "content_block_delta": {
        const block = blocks[event.index] as Block & { text?: string; thinking?: string; signature?: string; id?: string; name?: string };
        const delta = event.delta;
        if (!block) break;
        if (delta.type === "text_delta") {
          block.text = (block.text ?? "") + delta.text;
          emit({ kind: "text", text: delta.text });
        } else if (delta.type === "thinking_delta") {
          block.thinking = (block.thinking ?? "") + delta.thinking;
          emit({ kind: "thinking", text: delta.thinking });
        } else if (delta.type === "signature_delta") {
          block.signature = delta.signature;
        } else if (delta.type === "input_json_delta") {
          json.set(event.index, (json.get(event.index) ?? "") + delta.partial_json);
          if (block.type === "tool_use") emit({ kind: "tool-input", id: block.id ?? "", name: block.name ?? "", text: delta.partial_json });
        }
        break;
      }
      case "content_block_stop": {
        const block = blocks[event.index];
        const text = json.get(event.index);
        if ((block?.type === "tool_use" || block?.type === "server_tool_use") && text !== undefined) block.input = parseJson(text) as never;
        break;
      }
      case "message_delta":
        if (!message) break;
        message.stop_reason = event.delta.stop_reason;
        message.stop_sequence = event.delta.stop_sequence;
        // The final usage: output tokens, and any input counts the provider revised.
        for (const [key, value] of Object.entries(event.usage))
          if (value !== null && value !== undefined) (message.usage as unknown as Record<string, unknown>)[key] = value;
        break;
      case "message_stop":
        stopped = true;
        break;
    }
  }
  if (!message || !stopped) throw new Error("The Anthropic stream ended before message_stop (the connection was cut).");
  return { ...message, content: blocks.filter((b) => b !== undefined) };
}

function parseJson(text: string): unknown {
  if (text.trim() === "") return {};
  try {
    return JSON.parse(text);
  } catch {
    return text; // invalid JSON from the model: the tool layer reports it back as a tool error
  }
}
