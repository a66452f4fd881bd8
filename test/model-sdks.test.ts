// Each adapter driven through the provider's real SDK (openai, @anthropic-ai/sdk, ai + @ai-sdk/openai)
// against a local server that speaks the provider's wire format: what goes over the wire, what
// comes back, JSON and streamed, and how failures are classified. No network.
import Anthropic from "@anthropic-ai/sdk";
import { createOpenAI } from "@ai-sdk/openai";
import OpenAI from "openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { aiSdkModel } from "../src/agent/model/ai-sdk.js";
import { anthropicModel } from "../src/agent/model/anthropic.js";
import type { Model, ModelDelta, ModelRequest } from "../src/agent/model/model.js";
import { openaiModel } from "../src/agent/model/openai.js";
import { ModelProviderError } from "../src/agent/model/provider-errors.js";
import { ModelResponseSchema } from "../src/agent/model/schemas.js";
import { ProviderServer, type LedgerEntry } from "./support/provider-server/index.mjs";

let server: ProviderServer;
beforeAll(async () => {
  server = await new ProviderServer().start();
});
afterAll(() => server.close());
beforeEach(() => {
  server.queue.length = 0;
});

type Kind = "anthropic" | "openai" | "ai-sdk responses" | "ai-sdk chat";
const KINDS: Kind[] = ["anthropic", "openai", "ai-sdk responses", "ai-sdk chat"];

/** An adapter whose client is the real SDK pointed at the local server (SDK defaults otherwise: retries on). */
function modelFor(kind: Kind, options: { keepRaw?: boolean; stream?: boolean } = {}): Model {
  switch (kind) {
    case "anthropic":
      return anthropicModel({ model: "claude-test", client: new Anthropic({ apiKey: "k", baseURL: server.url }), ...options });
    case "openai":
      return openaiModel({ model: "gpt-test", client: new OpenAI({ apiKey: "k", baseURL: `${server.url}/v1` }), ...options });
    case "ai-sdk responses":
      return aiSdkModel(createOpenAI({ apiKey: "k", baseURL: `${server.url}/v1` }).responses("gpt-test"), options);
    case "ai-sdk chat":
      return aiSdkModel(createOpenAI({ apiKey: "k", baseURL: `${server.url}/v1` }).chat("gpt-test"), options);
  }
}

const REQUEST: ModelRequest = {
  system: "Be brief.",
  maxTokens: 300,
  tools: [{ name: "lookup", description: "Looks a word up.", inputSchema: { type: "object", properties: { q: { type: "string" } }, required: ["q"] } }],
  messages: [
    { role: "user", content: "Define tide." },
    { role: "assistant", content: [{ type: "tool_use", id: "call_0", name: "lookup", input: { q: "tide" } }] },
    { role: "tool", content: [{ type: "tool_result", toolUseId: "call_0", content: "the rise and fall of the sea" }] },
  ],
};

const REPLY = {
  thinking: "The user wants a definition and a source.",
  text: "A tide is the rise and fall of the sea.",
  toolCalls: [{ id: "call_0", name: "lookup", arguments: { q: "moon and tides" } }],
  usage: { input: 120, output: 40, cached: 8, reasoning: 0 },
};

/** What each format carries of the request, read back from the ledger. */
function sentTranscript(kind: Kind, entry: LedgerEntry) {
  const body = entry.body;
  if (kind === "anthropic")
    return {
      system: body.system,
      maxTokens: body.max_tokens,
      tools: body.tools.map((t: { name: string }) => t.name),
      toolResult: body.messages[2].content[0],
      toolCall: body.messages[1].content[0],
    };
  if (kind === "openai" || kind === "ai-sdk responses") {
    const input = body.input as { type?: string; role?: string; content?: unknown; call_id?: string; name?: string; arguments?: string; output?: string }[];
    const system = kind === "openai" ? body.instructions : input.find((i) => i.role === "system" || i.role === "developer")?.content;
    const call = input.find((i) => i.type === "function_call")!;
    const output = input.find((i) => i.type === "function_call_output")!;
    return {
      system,
      maxTokens: body.max_output_tokens,
      tools: body.tools.map((t: { name: string }) => t.name),
      toolResult: { call_id: output.call_id, output: output.output },
      toolCall: { call_id: call.call_id, name: call.name, arguments: JSON.parse(call.arguments!) },
    };
  }
  const messages = body.messages as {
    role: string;
    content?: unknown;
    tool_calls?: { id: string; function: { name: string; arguments: string } }[];
    tool_call_id?: string;
  }[];
  const call = messages.find((m) => m.tool_calls)!.tool_calls![0]!;
  const result = messages.find((m) => m.role === "tool")!;
  return {
    system: messages.find((m) => m.role === "system")?.content,
    maxTokens: body.max_tokens ?? body.max_completion_tokens,
    tools: body.tools.map((t: { function: { name: string } }) => t.function.name),
    toolResult: { call_id: result.tool_call_id, output: result.content },
    toolCall: { call_id: call.id, name: call.function.name, arguments: JSON.parse(call.function.arguments) },
  };
}

describe.each(KINDS)("%s adapter through the real SDK", (kind) => {
  it("sends the transcript in the provider's format and maps the JSON answer", async () => {
    server.enqueue(REPLY);
    const before = server.requests.length;
    const res = await modelFor(kind).generate(REQUEST);
    const [entry] = server.requests.slice(before);
    expect(server.requests.length - before).toBe(1);
    expect(entry!.stream).toBe(false);
    const sent = sentTranscript(kind, entry!);
    expect(sent.system).toBe("Be brief.");
    expect(sent.maxTokens).toBe(300);
    expect(sent.tools).toEqual(["lookup"]);
    if (kind === "anthropic") {
      expect(sent.toolCall).toEqual({ type: "tool_use", id: "call_0", name: "lookup", input: { q: "tide" } });
      expect(sent.toolResult).toEqual({ type: "tool_result", tool_use_id: "call_0", content: "the rise and fall of the sea" });
    } else {
      expect(sent.toolCall).toEqual({ call_id: "call_0", name: "lookup", arguments: { q: "tide" } });
      expect(sent.toolResult).toEqual({ call_id: "call_0", output: "the rise and fall of the sea" });
    }

    expect(ModelResponseSchema.parse(res)).toEqual(res);
    expect(res.stopReason).toBe("tool_use");
    expect(res.toolCalls).toEqual([{ type: "tool_use", id: "call_0", name: "lookup", input: { q: "moon and tides" }, ...providerOf(res.toolCalls[0]) }]);
    expect(res.content.filter((b) => b.type === "text").map((b) => (b as { text: string }).text)).toEqual([REPLY.text]);
    if (kind !== "ai-sdk chat") expect(res.content.some((b) => b.type === "thinking" && b.thinking === REPLY.thinking)).toBe(true);
    expect(res.usage.outputTokens).toBe(40);
    expect(res.usage.cacheReadTokens).toBe(8);
    expect(res.usage.inputTokens).toBe(kind === "anthropic" ? 120 : 120); // fresh input: the OpenAI total minus cached
    expect(res.model).toBe(kind === "anthropic" ? "claude-test" : "gpt-test");
  });

  it("streams text, thinking and tool-argument deltas, and resolves with the same response as the JSON call", async () => {
    server.enqueue(REPLY, REPLY);
    const whole = await modelFor(kind).generate(REQUEST);
    const deltas: ModelDelta[] = [];
    const texts: string[] = [];
    const before = server.requests.length;
    const streamed = await modelFor(kind).generate({ ...REQUEST, onDelta: (d) => deltas.push(d), onTextDelta: (t) => texts.push(t) });
    expect(server.requests[before]!.stream).toBe(true);
    const joined = (k: string) =>
      deltas
        .filter((d) => d.kind === k)
        .map((d) => d.text)
        .join("");
    expect(joined("text")).toBe(REPLY.text);
    expect(deltas.filter((d) => d.kind === "text").length).toBeGreaterThan(3); // in pieces, not at the end
    expect(texts.join("")).toBe(REPLY.text);
    if (kind !== "ai-sdk chat") expect(joined("thinking")).toBe(REPLY.thinking);
    const toolInput = deltas.filter((d): d is Extract<ModelDelta, { kind: "tool-input" }> => d.kind === "tool-input");
    expect(JSON.parse(toolInput.map((d) => d.text).join(""))).toEqual({ q: "moon and tides" });
    expect(new Set(toolInput.map((d) => d.name))).toEqual(new Set(["lookup"]));
    // Usage from the stream's final event; the same content as the JSON answer.
    expect(streamed.usage).toEqual(whole.usage);
    expect(streamed.stopReason).toBe(whole.stopReason);
    expect(strip(streamed.toolCalls)).toEqual(strip(whole.toolCalls));
    expect(strip(streamed.content)).toEqual(strip(whole.content));
  });

  it("keeps the provider's whole response out of raw unless keepRaw is set", async () => {
    server.enqueue(REPLY, REPLY);
    const lean = await modelFor(kind).generate(REQUEST);
    const full = await modelFor(kind, { keepRaw: true }).generate(REQUEST);
    expect(lean.raw).toEqual({});
    expect(JSON.stringify(full.raw).length).toBeGreaterThan(200);
  });

  it("a 400 fails at once with the provider's message: one request, not retried by the SDK (its default is 2 retries)", async () => {
    server.enqueue({ status: 400, message: "max_tokens: must be at most 8192" });
    const before = server.requests.length;
    const error = await modelFor(kind)
      .generate(REQUEST)
      .catch((e: unknown) => e);
    expect(server.requests.length - before).toBe(1);
    expect(error).toBeInstanceOf(ModelProviderError);
    const e = error as ModelProviderError;
    expect(e.code).toBe("MODEL_REQUEST_REJECTED");
    expect(e.nonRetryable).toBe(true);
    expect(e.status).toBe(400);
    expect(e.message).toContain("max_tokens: must be at most 8192");
  });

  it.each([
    [500, {}, undefined],
    [429, { "retry-after": "3" }, 3000],
    [503, { "retry-after-ms": "250" }, 250],
  ])("a %i is retryable, once per call, with the provider's Retry-After", async (status, headers, wait) => {
    server.enqueue({ status, headers, message: "overloaded" });
    const before = server.requests.length;
    const error = (await modelFor(kind)
      .generate({ ...REQUEST, onDelta: () => undefined })
      .catch((e: unknown) => e)) as ModelProviderError;
    expect(server.requests.length - before).toBe(1);
    expect(error.code).toBe("MODEL_PROVIDER_FAILED");
    expect(error.nonRetryable).toBe(false);
    expect(error.retryAfterMs).toBe(wait);
  });

  it("a connection cut mid-stream is a retryable failure", async () => {
    server.enqueue({ disconnect: "mid", ...REPLY });
    const deltas: ModelDelta[] = [];
    const error = (await modelFor(kind)
      .generate({ ...REQUEST, onDelta: (d) => deltas.push(d) })
      .catch((e: unknown) => e)) as ModelProviderError;
    expect(error).toBeInstanceOf(ModelProviderError);
    expect(error.nonRetryable).toBe(false);
  });
});

function providerOf(block: unknown): object {
  const provider = (block as { provider?: unknown }).provider;
  return provider === undefined ? {} : { provider };
}

/** Content without what the server numbers per response (item ids, signatures), so two answers compare. */
function strip(content: unknown[]): unknown[] {
  return content.map((block) => {
    const { provider: _provider, signature, ...rest } = block as { provider?: unknown; signature?: string };
    return signature === undefined ? rest : { ...rest, signature: signature.replace(/\d+$/, "") };
  });
}
