import type OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { fromOpenAIResponse, toOpenAIInput, toOpenAIParams } from "./openai-mapping.js";
import { openaiModel } from "./openai.js";
import { ModelResponseSchema, type Message } from "./schemas.js";

// A recorded-shape response typed with the SDK's own `Response`, so the fixture cannot drift from the documented API.
function response(output: OpenAI.Responses.ResponseOutputItem[], extra: Partial<OpenAI.Responses.Response> = {}): OpenAI.Responses.Response {
  return {
    id: "resp_67ccd2bed1ec8190b14f964abc054267",
    object: "response",
    created_at: 1741476542,
    status: "completed",
    error: null,
    incomplete_details: null,
    instructions: null,
    metadata: {},
    model: "gpt-5-mini-2025-08-07",
    output,
    output_text: "",
    parallel_tool_calls: true,
    temperature: 1,
    tool_choice: "auto",
    tools: [],
    top_p: 1,
    usage: {
      input_tokens: 1500,
      input_tokens_details: { cached_tokens: 1024 },
      output_tokens: 300,
      output_tokens_details: { reasoning_tokens: 192 },
      total_tokens: 1800,
    },
    ...extra,
  };
}

const reasoning: OpenAI.Responses.ResponseReasoningItem = {
  type: "reasoning",
  id: "rs_6820f383d7c08191846711c5df8233bc",
  summary: [
    { type: "summary_text", text: "**Checking weather**" },
    { type: "summary_text", text: "Need the tool." },
  ],
  encrypted_content: "gAAAAABoIPOEa0Y2f4",
};
const message: OpenAI.Responses.ResponseOutputMessage = {
  type: "message",
  id: "msg_67ccd2bf17f0819081ff3bb2cf6508e6",
  role: "assistant",
  status: "completed",
  content: [{ type: "output_text", text: "Let me check.", annotations: [] }],
};
const call: OpenAI.Responses.ResponseFunctionToolCall = {
  type: "function_call",
  id: "fc_12345xyz",
  call_id: "call_12345xyz",
  name: "get_weather",
  arguments: '{"city":"Paris"}',
  status: "completed",
};
const fixture = response([reasoning, message, call]);

function fakeClient(responses: OpenAI.Responses.Response[]) {
  const calls: { params: OpenAI.Responses.ResponseCreateParamsNonStreaming; options: unknown }[] = [];
  return {
    calls,
    responses: {
      create(params: OpenAI.Responses.ResponseCreateParamsNonStreaming, options?: unknown) {
        calls.push({ params: structuredClone(params), options });
        const next = responses.shift();
        if (!next) throw new Error("fake client: no more responses");
        return Promise.resolve(next);
      },
    },
  };
}

describe("openai adapter: response → neutral", () => {
  it("maps reasoning, message text and function calls; usage splits cached input off", () => {
    const res = fromOpenAIResponse(fixture);
    expect(res.content).toEqual([
      {
        type: "thinking",
        thinking: "**Checking weather**\n\nNeed the tool.",
        signature: "gAAAAABoIPOEa0Y2f4",
        provider: { openai: { itemId: "rs_6820f383d7c08191846711c5df8233bc", summary: ["**Checking weather**", "Need the tool."] } },
      },
      { type: "text", text: "Let me check.", provider: { openai: { itemId: "msg_67ccd2bf17f0819081ff3bb2cf6508e6" } } },
      { type: "tool_use", id: "call_12345xyz", name: "get_weather", input: { city: "Paris" }, provider: { openai: { itemId: "fc_12345xyz" } } },
    ]);
    expect(res.toolCalls).toHaveLength(1);
    expect(res.stopReason).toBe("tool_use");
    expect(res.usage).toEqual({ inputTokens: 476, outputTokens: 300, cacheReadTokens: 1024, cacheWriteTokens: 0, reasoningTokens: 192 });
    expect(res.model).toBe("gpt-5-mini-2025-08-07");
    expect(res.id).toBe("resp_67ccd2bed1ec8190b14f964abc054267");
    expect(ModelResponseSchema.parse(res)).toEqual(res);
  });

  it("normalizes stop reasons: completed, max_output_tokens, content_filter, refusal", () => {
    expect(fromOpenAIResponse(response([message])).stopReason).toBe("end_turn");
    expect(fromOpenAIResponse(response([message], { status: "incomplete", incomplete_details: { reason: "max_output_tokens" } })).stopReason).toBe(
      "max_tokens",
    );
    expect(fromOpenAIResponse(response([], { status: "incomplete", incomplete_details: { reason: "content_filter" } })).stopReason).toBe("refusal");
    const refusal = fromOpenAIResponse(response([{ ...message, content: [{ type: "refusal", refusal: "I can't help with that." }] }]));
    expect(refusal.stopReason).toBe("refusal");
    expect(refusal.content[0]).toMatchObject({ type: "text", text: "I can't help with that." });
    expect(fromOpenAIResponse(response([], { status: "failed" })).stopReason).toBe("other");
  });

  it("keeps invalid JSON arguments as the raw string", () => {
    const res = fromOpenAIResponse(response([{ ...call, arguments: '{"city": Par' }]));
    expect(res.toolCalls[0]?.input).toBe('{"city": Par');
  });
});

describe("openai adapter: neutral → request", () => {
  it("sends reasoning, message and function call items back with their ids, and results as function_call_output", () => {
    const conversation: Message[] = [
      { role: "user", content: "Weather in Paris?" },
      { role: "assistant", content: fromOpenAIResponse(fixture).content },
      { role: "tool", content: [{ type: "tool_result", toolUseId: "call_12345xyz", content: "18°C" }] },
    ];
    expect(toOpenAIInput(conversation)).toEqual([
      { role: "user", content: "Weather in Paris?" },
      {
        type: "reasoning",
        id: "rs_6820f383d7c08191846711c5df8233bc",
        summary: [
          { type: "summary_text", text: "**Checking weather**" },
          { type: "summary_text", text: "Need the tool." },
        ],
        encrypted_content: "gAAAAABoIPOEa0Y2f4",
      },
      {
        type: "message",
        role: "assistant",
        id: "msg_67ccd2bf17f0819081ff3bb2cf6508e6",
        status: "completed",
        content: [{ type: "output_text", text: "Let me check.", annotations: [] }],
      },
      { type: "function_call", call_id: "call_12345xyz", name: "get_weather", arguments: '{"city":"Paris"}', id: "fc_12345xyz" },
      { type: "function_call_output", call_id: "call_12345xyz", output: "18°C" },
    ]);
  });

  it("drops thinking it cannot send (foreign or redacted), sends plain assistant text and error results", () => {
    const input = toOpenAIInput([
      { role: "user", content: [{ type: "text", text: "go" }] },
      {
        role: "assistant",
        content: [
          { type: "thinking", thinking: "from claude", signature: "sig" },
          { type: "redacted_thinking", data: "xx" },
          { type: "text", text: "ok" },
          { type: "tool_use", id: "toolu_1", name: "run", input: { a: 1 } },
        ],
      },
      { role: "tool", content: [{ type: "tool_result", toolUseId: "toolu_1", content: "bad input", isError: true }] },
    ]);
    expect(input).toEqual([
      { role: "user", content: [{ type: "input_text", text: "go" }] },
      { role: "assistant", content: "ok" },
      { type: "function_call", call_id: "toolu_1", name: "run", arguments: '{"a":1}' },
      { type: "function_call_output", call_id: "toolu_1", output: "Error: bad input" },
    ]);
  });

  it("maps system, tools, tool choice, max tokens, temperature and extra params", () => {
    const params = toOpenAIParams(
      {
        system: "Be brief.",
        messages: [{ role: "user", content: "hi" }],
        tools: [{ name: "get_weather", description: "Weather", inputSchema: { type: "object", properties: {} } }],
        toolChoice: { name: "get_weather" },
        maxTokens: 256,
        temperature: 0.2,
      },
      { model: "gpt-5-mini", params: { reasoning: { effort: "low" } } },
    );
    expect(params).toEqual({
      reasoning: { effort: "low" },
      model: "gpt-5-mini",
      instructions: "Be brief.",
      input: [{ role: "user", content: "hi" }],
      tools: [{ type: "function", name: "get_weather", description: "Weather", parameters: { type: "object", properties: {} }, strict: false }],
      tool_choice: { type: "function", name: "get_weather" },
      max_output_tokens: 256,
      temperature: 0.2,
    });
    expect(toOpenAIParams({ messages: [], toolChoice: "required" }, { model: "m" }).tool_choice).toBe("required");
  });
});

describe("openaiModel", () => {
  it("calls responses.create with the mapped params and the signal", async () => {
    const client = fakeClient([fixture]);
    const model = openaiModel({ model: "gpt-5-mini", client });
    const controller = new AbortController();
    const res = await model.generate({ messages: [{ role: "user", content: "Weather?" }], signal: controller.signal });
    expect(model.provider).toBe("openai");
    expect(client.calls[0]?.params).toEqual({ model: "gpt-5-mini", input: [{ role: "user", content: "Weather?" }] });
    expect((client.calls[0]?.options as { signal: AbortSignal }).signal).toBe(controller.signal);
    expect(res.stopReason).toBe("tool_use");
  });
});
