import type { LanguageModelV2, LanguageModelV2CallOptions, LanguageModelV3GenerateResult } from "@ai-sdk/provider";
import { MockLanguageModelV3 } from "ai/test";
import { describe, expect, it } from "vitest";
import { fromAiSdkResult, toAiSdkPrompt } from "./ai-sdk-mapping.js";
import { aiSdkModel } from "./ai-sdk.js";
import { ModelResponseSchema, type Message } from "./schemas.js";

// What @ai-sdk/anthropic returns for a thinking + tool call turn, in the V3 specification's types.
const v3Result: LanguageModelV3GenerateResult = {
  content: [
    { type: "reasoning", text: "Need the weather tool.", providerMetadata: { anthropic: { signature: "EqQBCgIYAhIM" } } },
    { type: "reasoning", text: "", providerMetadata: { anthropic: { redactedData: "EmwKAhgBEgy3" } } },
    { type: "text", text: "Checking." },
    { type: "tool-call", toolCallId: "toolu_01", toolName: "get_weather", input: '{"city":"Paris"}' },
  ],
  finishReason: { unified: "tool-calls", raw: "tool_use" },
  usage: {
    inputTokens: { total: 7120, noCache: 120, cacheRead: 5000, cacheWrite: 2000 },
    outputTokens: { total: 80, text: 50, reasoning: 30 },
  },
  response: { id: "msg_01", modelId: "claude-sonnet-4-5-20250929", timestamp: new Date("2026-11-22T00:00:00Z") },
  warnings: [],
};

describe("AI SDK adapter (LanguageModelV3, via ai/test's MockLanguageModelV3)", () => {
  it("calls doGenerate with a V3 prompt and maps the result, signatures and cache usage included", async () => {
    const mock = new MockLanguageModelV3({ provider: "anthropic.messages", modelId: "claude-sonnet-4-5", doGenerate: v3Result });
    const model = aiSdkModel(mock, { callOptions: { providerOptions: { anthropic: { sendReasoning: true } } }, keepRaw: true });
    const controller = new AbortController();
    const res = await model.generate({
      system: "Be brief.",
      messages: [{ role: "user", content: "Weather in Paris?" }],
      tools: [{ name: "get_weather", description: "Weather", inputSchema: { type: "object", properties: { city: { type: "string" } } } }],
      toolChoice: "auto",
      maxTokens: 300,
      temperature: 0.5,
      signal: controller.signal,
    });
    expect(model.provider).toBe("ai-sdk:anthropic.messages");
    expect(model.modelId).toBe("claude-sonnet-4-5");
    expect(mock.doGenerateCalls).toHaveLength(1);
    expect(mock.doGenerateCalls[0]).toEqual({
      providerOptions: { anthropic: { sendReasoning: true } },
      prompt: [
        { role: "system", content: "Be brief." },
        { role: "user", content: [{ type: "text", text: "Weather in Paris?" }] },
      ],
      tools: [{ type: "function", name: "get_weather", description: "Weather", inputSchema: { type: "object", properties: { city: { type: "string" } } } }],
      toolChoice: { type: "auto" },
      maxOutputTokens: 300,
      temperature: 0.5,
      abortSignal: controller.signal,
    });
    expect(res.content).toEqual([
      { type: "thinking", thinking: "Need the weather tool.", signature: "EqQBCgIYAhIM", provider: { "ai-sdk": { anthropic: { signature: "EqQBCgIYAhIM" } } } },
      { type: "redacted_thinking", data: "EmwKAhgBEgy3", provider: { "ai-sdk": { anthropic: { redactedData: "EmwKAhgBEgy3" } } } },
      { type: "text", text: "Checking." },
      { type: "tool_use", id: "toolu_01", name: "get_weather", input: { city: "Paris" } },
    ]);
    expect(res.stopReason).toBe("tool_use");
    expect(res.rawStopReason).toBe("tool_use");
    expect(res.usage).toEqual({ inputTokens: 120, outputTokens: 80, cacheReadTokens: 5000, cacheWriteTokens: 2000, reasoningTokens: 30 });
    expect(res.model).toBe("claude-sonnet-4-5-20250929");
    expect(res.id).toBe("msg_01");
    expect(ModelResponseSchema.parse(res)).toEqual(res);
    expect((res.raw as { response: { timestamp: string } }).response.timestamp).toBe("2026-11-22T00:00:00.000Z");
  });

  it("sends thinking back as reasoning parts with their provider metadata, and tool results with the call's tool name", async () => {
    const first = await aiSdkModel(new MockLanguageModelV3({ doGenerate: v3Result })).generate({ messages: [{ role: "user", content: "go" }] });
    const conversation: Message[] = [
      { role: "user", content: "go" },
      { role: "assistant", content: first.content },
      { role: "tool", content: [{ type: "tool_result", toolUseId: "toolu_01", content: "18°C" }] },
      { role: "assistant", content: [{ type: "tool_use", id: "toolu_02", name: "x", input: {} }] },
      { role: "tool", content: [{ type: "tool_result", toolUseId: "toolu_02", content: "nope", isError: true }] },
    ];
    expect(toAiSdkPrompt(conversation)).toEqual([
      { role: "user", content: [{ type: "text", text: "go" }] },
      {
        role: "assistant",
        content: [
          { type: "reasoning", text: "Need the weather tool.", providerOptions: { anthropic: { signature: "EqQBCgIYAhIM" } } },
          { type: "reasoning", text: "", providerOptions: { anthropic: { redactedData: "EmwKAhgBEgy3" } } },
          { type: "text", text: "Checking." },
          { type: "tool-call", toolCallId: "toolu_01", toolName: "get_weather", input: { city: "Paris" } },
        ],
      },
      { role: "tool", content: [{ type: "tool-result", toolCallId: "toolu_01", toolName: "get_weather", output: { type: "text", value: "18°C" } }] },
      { role: "assistant", content: [{ type: "tool-call", toolCallId: "toolu_02", toolName: "x", input: {} }] },
      { role: "tool", content: [{ type: "tool-result", toolCallId: "toolu_02", toolName: "x", output: { type: "error-text", value: "nope" } }] },
    ]);
  });

  it.each([
    ["stop", "end_turn"],
    ["length", "max_tokens"],
    ["content-filter", "refusal"],
    ["error", "other"],
    ["other", "other"],
  ] as const)("normalizes finish reason %s → %s", (unified, expected) => {
    expect(fromAiSdkResult({ ...v3Result, content: [], finishReason: { unified, raw: undefined } }, "m").stopReason).toBe(expected);
  });
});

describe("AI SDK adapter (LanguageModelV2)", () => {
  it("reads the flat V2 usage (cached input inside inputTokens) and string finish reasons", async () => {
    const calls: LanguageModelV2CallOptions[] = [];
    const v2: LanguageModelV2 = {
      specificationVersion: "v2",
      provider: "openai.responses",
      modelId: "gpt-5-mini",
      supportedUrls: {},
      doGenerate(options) {
        calls.push(options);
        return Promise.resolve({
          content: [
            { type: "reasoning", text: "thinking…", providerMetadata: { openai: { itemId: "rs_1" } } },
            { type: "text", text: "Hello." },
          ],
          finishReason: "stop",
          usage: { inputTokens: 1500, outputTokens: 300, totalTokens: 1800, reasoningTokens: 192, cachedInputTokens: 1024 },
          warnings: [],
        });
      },
      doStream() {
        throw new Error("not used");
      },
    };
    const res = await aiSdkModel(v2).generate({ messages: [{ role: "user", content: "hi" }], toolChoice: { name: "t" } });
    expect(calls[0]?.toolChoice).toEqual({ type: "tool", toolName: "t" });
    expect(res.usage).toEqual({ inputTokens: 476, outputTokens: 300, cacheReadTokens: 1024, cacheWriteTokens: 0, reasoningTokens: 192 });
    expect(res.stopReason).toBe("end_turn");
    expect(res.model).toBe("gpt-5-mini");
    expect(res.content[0]).toEqual({ type: "thinking", thinking: "thinking…", provider: { "ai-sdk": { openai: { itemId: "rs_1" } } } });
  });

  it("refuses an object that is not a supported language model", () => {
    expect(() => aiSdkModel({ specificationVersion: "v1", provider: "p", modelId: "m", doGenerate: () => Promise.resolve({}) } as never)).toThrow(
      /v2, v3 and v4/,
    );
  });
});
