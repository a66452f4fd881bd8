import type Anthropic from "@anthropic-ai/sdk";
import { describe, expect, it } from "vitest";
import { fromAnthropicMessage, toAnthropicParams } from "./anthropic-mapping.js";
import { anthropicModel } from "./anthropic.js";
import type { Message } from "./schemas.js";
import { ModelResponseSchema } from "./schemas.js";

// A recorded-shape response: typed with the SDK's own `Message`, so the fixture cannot drift from the documented API.
const fixture: Anthropic.Messages.Message = {
  id: "msg_01XFDUDYJgAACzvnptvVoYEL",
  type: "message",
  role: "assistant",
  model: "claude-sonnet-4-5-20250929",
  container: null,
  diagnostics: null,
  stop_details: null,
  content: [
    { type: "thinking", thinking: "The user wants the weather; call the tool.", signature: "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds" },
    { type: "redacted_thinking", data: "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP" },
    { type: "text", text: "Let me check.", citations: null },
    { type: "tool_use", id: "toolu_01A09q90qw90lq917835lq9", name: "get_weather", input: { city: "Paris" }, caller: { type: "direct" } },
  ],
  stop_reason: "tool_use",
  stop_sequence: null,
  usage: {
    input_tokens: 120,
    output_tokens: 80,
    cache_creation_input_tokens: 2000,
    cache_read_input_tokens: 5000,
    cache_creation: { ephemeral_5m_input_tokens: 2000, ephemeral_1h_input_tokens: 0 },
    inference_geo: null,
    output_tokens_details: { thinking_tokens: 30 },
    server_tool_use: null,
    service_tier: "standard",
    speed: null,
  },
};

function fakeClient(responses: Anthropic.Messages.Message[]) {
  const calls: { params: Anthropic.Messages.MessageCreateParamsNonStreaming; options: unknown }[] = [];
  return {
    calls,
    messages: {
      create(params: Anthropic.Messages.MessageCreateParamsNonStreaming, options?: unknown) {
        calls.push({ params: structuredClone(params), options });
        const next = responses.shift();
        if (!next) throw new Error("fake client: no more responses");
        return Promise.resolve(next);
      },
    },
  };
}

describe("anthropic adapter: response → neutral", () => {
  it("maps every block kind, the stop reason and usage with cache and thinking tokens", () => {
    const res = fromAnthropicMessage(fixture);
    expect(res.content).toEqual([
      { type: "thinking", thinking: "The user wants the weather; call the tool.", signature: "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds" },
      { type: "redacted_thinking", data: "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP" },
      { type: "text", text: "Let me check." },
      { type: "tool_use", id: "toolu_01A09q90qw90lq917835lq9", name: "get_weather", input: { city: "Paris" } },
    ]);
    expect(res.toolCalls).toEqual([{ type: "tool_use", id: "toolu_01A09q90qw90lq917835lq9", name: "get_weather", input: { city: "Paris" } }]);
    expect(res.stopReason).toBe("tool_use");
    expect(res.usage).toEqual({ inputTokens: 120, outputTokens: 80, cacheReadTokens: 5000, cacheWriteTokens: 2000, reasoningTokens: 30 });
    expect(res.model).toBe("claude-sonnet-4-5-20250929");
    expect(res.id).toBe("msg_01XFDUDYJgAACzvnptvVoYEL");
    expect(ModelResponseSchema.parse(res)).toEqual(res);
    expect(JSON.parse(JSON.stringify(res))).toEqual(res);
  });

  it.each([
    ["end_turn", "end_turn"],
    ["max_tokens", "max_tokens"],
    ["stop_sequence", "stop_sequence"],
    ["refusal", "refusal"],
    ["pause_turn", "other"],
    ["model_context_window_exceeded", "max_tokens"],
  ] as const)("normalizes stop_reason %s → %s", (raw, expected) => {
    const res = fromAnthropicMessage({ ...fixture, content: [], stop_reason: raw });
    expect(res.stopReason).toBe(expected);
    expect(res.rawStopReason).toBe(raw);
  });

  it("counts null cache fields as zero", () => {
    const res = fromAnthropicMessage({
      ...fixture,
      usage: { ...fixture.usage, cache_creation_input_tokens: null, cache_read_input_tokens: null, output_tokens_details: null },
    });
    expect(res.usage).toEqual({ inputTokens: 120, outputTokens: 80, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 });
  });
});

describe("anthropic adapter: neutral → request", () => {
  const conversation: Message[] = [
    { role: "user", content: "Weather in Paris?" },
    { role: "assistant", content: fromAnthropicMessage(fixture).content },
    { role: "tool", content: [{ type: "tool_result", toolUseId: "toolu_01A09q90qw90lq917835lq9", content: "18°C, sunny" }] },
    { role: "user", content: "And in Rome?" },
  ];

  it("maps system, tools, tool choice, max tokens and messages; tool results lead the next user turn", () => {
    const params = toAnthropicParams(
      {
        system: "Be brief.",
        messages: conversation,
        tools: [
          {
            name: "get_weather",
            description: "Weather for a city",
            inputSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
          },
        ],
        toolChoice: { name: "get_weather" },
        maxTokens: 512,
      },
      { model: "claude-sonnet-4-5", params: { metadata: { user_id: "u1" } } },
    );
    expect(params).toEqual({
      metadata: { user_id: "u1" },
      model: "claude-sonnet-4-5",
      max_tokens: 512,
      system: "Be brief.",
      tools: [
        {
          name: "get_weather",
          description: "Weather for a city",
          input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
        },
      ],
      tool_choice: { type: "tool", name: "get_weather" },
      messages: [
        { role: "user", content: "Weather in Paris?" },
        {
          role: "assistant",
          content: [
            { type: "thinking", thinking: "The user wants the weather; call the tool.", signature: "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds" },
            { type: "redacted_thinking", data: "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP" },
            { type: "text", text: "Let me check." },
            { type: "tool_use", id: "toolu_01A09q90qw90lq917835lq9", name: "get_weather", input: { city: "Paris" } },
          ],
        },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "toolu_01A09q90qw90lq917835lq9", content: "18°C, sunny" },
            { type: "text", text: "And in Rome?" },
          ],
        },
      ],
    });
  });

  it("maps tool choices and error results, and defaults max_tokens", () => {
    const base = { messages: [{ role: "user" as const, content: "hi" }] };
    expect(toAnthropicParams({ ...base, toolChoice: "required" }, { model: "m" }).tool_choice).toEqual({ type: "any" });
    expect(toAnthropicParams({ ...base, toolChoice: "none" }, { model: "m" }).tool_choice).toEqual({ type: "none" });
    expect(toAnthropicParams({ ...base, toolChoice: "auto" }, { model: "m" }).tool_choice).toEqual({ type: "auto" });
    expect(toAnthropicParams(base, { model: "m" }).max_tokens).toBe(4096);
    expect(toAnthropicParams(base, { model: "m", defaultMaxTokens: 100 }).max_tokens).toBe(100);
    const withError = toAnthropicParams(
      {
        messages: [
          { role: "user", content: "go" },
          { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "x", input: {} }] },
          { role: "tool", content: [{ type: "tool_result", toolUseId: "t1", content: "boom", isError: true }] },
        ],
      },
      { model: "m" },
    );
    const foreign = toAnthropicParams(
      {
        messages: [
          { role: "user", content: "go" },
          {
            role: "assistant",
            content: [
              { type: "thinking", thinking: "openai summary" },
              { type: "text", text: "hi" },
            ],
          },
        ],
      },
      { model: "m" },
    );
    expect(foreign.messages[1]).toEqual({ role: "assistant", content: [{ type: "text", text: "hi" }] });
    expect(withError.messages[2]).toEqual({ role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "boom", is_error: true }] });
  });
});

describe("anthropicModel", () => {
  it("calls messages.create with the mapped params and the abort signal, and maps the answer", async () => {
    const client = fakeClient([fixture]);
    const model = anthropicModel({ model: "claude-sonnet-4-5", client });
    const controller = new AbortController();
    const res = await model.generate({ messages: [{ role: "user", content: "Weather in Paris?" }], signal: controller.signal });
    expect(model.provider).toBe("anthropic");
    expect(model.modelId).toBe("claude-sonnet-4-5");
    expect(client.calls).toHaveLength(1);
    expect(client.calls[0]?.params).toEqual({ model: "claude-sonnet-4-5", max_tokens: 4096, messages: [{ role: "user", content: "Weather in Paris?" }] });
    expect((client.calls[0]?.options as { signal: AbortSignal }).signal).toBe(controller.signal);
    expect(res.toolCalls.map((c) => c.name)).toEqual(["get_weather"]);
  });

  it("rejects a malformed request before calling the provider", async () => {
    const client = fakeClient([fixture]);
    const model = anthropicModel({ model: "m", client });
    await expect(model.generate({ messages: [{ role: "robot", content: "x" }] as never })).rejects.toMatchObject({ code: "INVALID_INPUT" });
    expect(client.calls).toHaveLength(0);
  });
});
