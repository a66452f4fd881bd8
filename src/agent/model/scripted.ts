/**
 * A model that replays a scripted conversation: for tests, examples and `npm start` without network or keys.
 */
import { ScriptExhaustedError, ScriptMismatchError } from "./errors.js";
import { estimateContentTokens, estimateTokens } from "./estimate.js";
import { checkRequest, emptyUsage, makeResponse, textOf, transcriptProblems } from "./messages.js";
import { deltaSink } from "./delta.js";
import type { Model, ModelDelta, ModelRequest, ModelResponse } from "./model.js";
import type { ContentBlock, StopReason, Usage } from "./schemas.js";

/** What one scripted turn answers. Only `content` is needed; the rest is derived when absent. */
export interface ScriptedReply {
  /** The blocks to return; a string is one text block. */
  content: ContentBlock[] | string;
  /** Default: `tool_use` when `content` has tool calls, else `end_turn`. */
  stopReason?: StopReason;
  /** Default: the deterministic estimate of the request (input) and of `content` (output). */
  usage?: Partial<Usage>;
}

/** A scripted turn with an expectation on the request it answers. */
export interface ScriptedTurnWithExpect extends ScriptedReply {
  /** Called with the request before answering; throw (e.g. a vitest `expect`) to reject it. */
  expect: (request: ModelRequest) => void;
}

/**
 * One turn of a script: a reply, a reply with an expectation, or a function of the request
 * (which may inspect tool results and answer accordingly).
 */
export type ScriptedTurn = ScriptedReply | ScriptedTurnWithExpect | ((request: ModelRequest, turnIndex: number) => ScriptedReply | Promise<ScriptedReply>);

/** Options of {@link ScriptedModel}. */
export interface ScriptedModelOptions {
  /** The model id reported and priced. Default `scripted` (free in the shipped price table). */
  modelId?: string;
  /**
   * How the turn for a call is chosen:
   * - `assistant-turns` (default): the number of assistant messages in the request. Deterministic across
   *   processes, so a worker that resumes a run after a crash gets the turn the crashed one would have.
   * - `calls`: the number of calls this instance has answered. Use it when requests do not grow by one
   *   assistant turn per call (e.g. summarization calls on the same model).
   */
  cursor?: "assistant-turns" | "calls";
  /** Reject requests that are not valid transcripts (see `transcriptProblems`). Default true. */
  validate?: boolean;
  /**
   * With `request.onTextDelta`, the reply's text is sent to it word by word before `generate`
   * resolves (like a streaming provider); this many milliseconds pass between pieces. Default 0.
   */
  deltaDelayMs?: number;
}

/**
 * Replays a scripted conversation deterministically. Same interface as the real adapters.
 *
 * @example
 * ```ts
 * const model = new ScriptedModel([
 *   { content: [{ type: "tool_use", id: "call_1", name: "search", input: { q: "batteries" } }] },
 *   (request) => ({ content: `Found: ${lastToolResult(request)}` }),
 * ]);
 * await model.generate({ messages: [{ role: "user", content: "research batteries" }] });
 * model.calls; // 1
 * ```
 */
export class ScriptedModel implements Model {
  /** Always `scripted`. */
  readonly provider = "scripted";
  /** See {@link ScriptedModelOptions.modelId}. */
  readonly modelId: string;
  /** Every request this instance answered, in order (without their signals). */
  readonly requests: ModelRequest[] = [];
  private readonly turns: ScriptedTurn[];
  private readonly cursor: "assistant-turns" | "calls";
  private readonly validate: boolean;
  private readonly deltaDelayMs: number;

  constructor(turns: ScriptedTurn[], options: ScriptedModelOptions = {}) {
    this.turns = [...turns];
    this.modelId = options.modelId ?? "scripted";
    this.cursor = options.cursor ?? "assistant-turns";
    this.validate = options.validate ?? true;
    this.deltaDelayMs = options.deltaDelayMs ?? 0;
  }

  /** How many calls this instance has answered. */
  get calls(): number {
    return this.requests.length;
  }

  /** How many turns the script has. */
  get length(): number {
    return this.turns.length;
  }

  /** Answers with the scripted turn for this request. */
  async generate(request: ModelRequest): Promise<ModelResponse> {
    checkRequest(request);
    const index = this.cursor === "calls" ? this.requests.length : request.messages.filter((m) => m.role === "assistant").length;
    const { signal: _signal, onTextDelta: _onTextDelta, onDelta: _onDelta, ...json } = request;
    this.requests.push(structuredClone(json));
    if (this.validate) {
      const problems = transcriptProblems(request.messages);
      if (problems.length > 0)
        throw new ScriptMismatchError(index, `the request is not a valid transcript: ${problems.map((p) => `message ${p.index}: ${p.problem}`).join("; ")}`);
    }
    const turn = this.turns[index];
    if (turn === undefined) {
      const last = request.messages[request.messages.length - 1];
      const detail =
        this.cursor === "calls"
          ? `call ${index + 1}`
          : `the request has ${index} assistant turn(s)${last ? `; its last message is ${last.role === "tool" ? "a tool result" : `"${truncate(last.role === "user" ? textOf(last.content) : last.role)}"`}` : ""}`;
      throw new ScriptExhaustedError(this.turns.length, index, detail);
    }
    let reply: ScriptedReply;
    if (typeof turn === "function") {
      reply = await turn(request, index);
    } else {
      if ("expect" in turn) {
        try {
          turn.expect(request);
        } catch (cause) {
          throw new ScriptMismatchError(index, `the request did not meet the turn's expectation: ${cause instanceof Error ? cause.message : String(cause)}`, {
            cause,
          });
        }
      }
      reply = turn;
    }
    const response = this.respond(request, reply, index);
    const emit = deltaSink(request);
    if (emit) await this.stream(response, emit, request.signal);
    return response;
  }

  /**
   * Sends the response's text and thinking to the request's delta listeners in pieces (each word with
   * the space after it), and each tool call's JSON arguments in pieces of 8 characters.
   */
  private async stream(response: ModelResponse, emit: (delta: ModelDelta) => void, signal: AbortSignal | undefined): Promise<void> {
    for (const block of response.content) {
      let deltas: ModelDelta[];
      if (block.type === "text") deltas = (block.text.match(/\S+\s*|\s+/g) ?? []).map((text) => ({ kind: "text", text }));
      else if (block.type === "thinking") deltas = (block.thinking.match(/\S+\s*|\s+/g) ?? []).map((text) => ({ kind: "thinking", text }));
      else if (block.type === "tool_use") {
        const json = JSON.stringify(block.input ?? {});
        deltas = [];
        for (let i = 0; i < json.length; i += 8) deltas.push({ kind: "tool-input", id: block.id, name: block.name, text: json.slice(i, i + 8) });
      } else continue;
      for (const delta of deltas) {
        signal?.throwIfAborted();
        emit(delta);
        if (this.deltaDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.deltaDelayMs));
      }
    }
  }

  private respond(request: ModelRequest, reply: ScriptedReply, index: number): ModelResponse {
    const content: ContentBlock[] = typeof reply.content === "string" ? [{ type: "text", text: reply.content }] : structuredClone(reply.content);
    const usage: Usage = { ...emptyUsage(), inputTokens: estimateTokens(request).inputTokens, outputTokens: estimateContentTokens(content), ...reply.usage };
    const stopReason = reply.stopReason ?? (content.some((b) => b.type === "tool_use") ? "tool_use" : "end_turn");
    return makeResponse({ content, stopReason, usage, model: this.modelId, raw: { scripted: true, turn: index } });
  }
}

function truncate(text: string, max = 60): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
