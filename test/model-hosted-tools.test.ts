// Provider-hosted tools through the real SDKs against the local provider server, JSON and streamed:
// the tools go out as given, the provider's hosted-tool items come back as `hosted_tool` blocks (not
// left in raw), and the next turn sends them back so the conversation stays valid for that provider.
// An agent journals them with the model step and `cairn show` lists them.
import { describe, expect, it } from "vitest";
import { defineAgent, type AgentResult } from "../src/agent/agent.js";
import type { Model, ModelRequest } from "../src/agent/model/model.js";
import { ModelResponseSchema, type ProviderTools } from "../src/agent/model/schemas.js";
import { agentRunView } from "../src/agent/transcript-view.js";
import { transcriptLines } from "../src/cli/agent-format.js";
import { readJournal } from "../src/cli/follow.js";
import { testEngine } from "./support/engines.js";
import type { ProviderReply } from "./support/provider-server/index.mjs";
import { sdkModels, useProviderServer } from "./support/sdk-models.js";

const server = useProviderServer();

const { anthropic, openai, "ai-sdk": aiSdk } = sdkModels(server);
const MODELS: Record<string, () => Model> = { anthropic, openai, "ai-sdk": aiSdk };

const TOOLS: ProviderTools = {
  openai: [{ type: "web_search" }],
  anthropic: [{ type: "web_search_20250305", name: "web_search", max_uses: 3 }],
  "ai-sdk": [{ type: "provider", id: "openai.web_search", name: "web_search", args: {} }],
};

const WEB_CALL = { type: "web_search_call", id: "ws_1", status: "completed", action: { type: "search", query: "tides" } };
const SERVER_USE = { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: { query: "tides" } };
const SERVER_RESULT = {
  type: "web_search_tool_result",
  tool_use_id: "srvtoolu_1",
  content: [{ type: "web_search_result", url: "https://example.com/tides", title: "Tides", encrypted_content: "enc_1", page_age: null }],
};
const REPLY: ProviderReply = { hosted: { openai: [WEB_CALL], anthropic: [SERVER_USE, SERVER_RESULT] }, text: "Tides follow the moon." };

describe.each(Object.keys(MODELS))("%s: provider-hosted tools", (name) => {
  it.each([false, true])("go out as given, come back as hosted_tool blocks, and are sent back next turn (stream %s)", async (stream) => {
    const model = MODELS[name]!();
    server.enqueue(REPLY, { text: "Yes." });
    const before = server.requests.length;
    const request: ModelRequest = { messages: [{ role: "user", content: "Why are there tides?" }], maxTokens: 200, providerTools: TOOLS };
    if (stream) request.onDelta = () => undefined;
    const response = await model.generate(request);
    const first = server.requests[before]!.body;
    // Only the adapter's own list is sent.
    if (name === "anthropic") expect(first.tools).toEqual(TOOLS.anthropic);
    else expect(first.tools).toEqual([expect.objectContaining({ type: "web_search" })]);

    expect(ModelResponseSchema.parse(response)).toBeTruthy();
    expect(response.raw).toEqual({});
    const hosted = response.content.filter((b) => b.type === "hosted_tool");
    if (name === "anthropic")
      expect(hosted).toEqual([
        expect.objectContaining({ name: "web_search", id: "srvtoolu_1", phase: "call", input: { query: "tides" } }),
        expect.objectContaining({ name: "web_search", id: "srvtoolu_1", phase: "result", output: SERVER_RESULT.content }),
      ]);
    else if (name === "openai")
      expect(hosted).toEqual([expect.objectContaining({ name: "web_search", id: "ws_1", phase: "call+result", input: WEB_CALL.action })]);
    else
      expect(hosted.map((b) => [b.type === "hosted_tool" && b.phase, b.type === "hosted_tool" && b.id])).toEqual([
        ["call", "ws_1"],
        ["result", "ws_1"],
      ]);
    expect(response.content.at(-1)).toMatchObject({ type: "text", text: "Tides follow the moon." });

    // Turn 2: the hosted items go back with the assistant turn.
    await model.generate({
      ...request,
      messages: [...request.messages, { role: "assistant", content: response.content }, { role: "user", content: "Really?" }],
    });
    const second = server.requests[before + 1]!.body;
    if (name === "anthropic") {
      expect(second.messages[1]).toEqual({ role: "assistant", content: [SERVER_USE, SERVER_RESULT, { type: "text", text: "Tides follow the moon." }] });
    } else {
      const input = second.input as { type?: string; id?: string }[];
      const sentBack = input.find((item) => item.id === "ws_1");
      if (name === "openai") expect(sentBack).toEqual(WEB_CALL);
      // The AI SDK's OpenAI provider sends the item back by reference (the Responses API stores it) or whole.
      else expect(sentBack).toMatchObject({ type: expect.stringMatching(/^(item_reference|web_search_call)$/), id: "ws_1" });
    }
  });
});

describe("an agent with provider-hosted tools", () => {
  it("journals the hosted calls with the model step and shows them in the transcript", async () => {
    const agent = defineAgent({ name: "searcher", model: MODELS["anthropic"]!, providerTools: TOOLS, prices: { "claude-test": { input: 1, output: 1 } } });
    const engine = await testEngine("sqlite", { workflows: [agent] });
    engine.startWorker({ pollInterval: 10 });
    server.enqueue(REPLY);
    const before = server.requests.length;
    await engine.start(agent, { prompt: "Why are there tides?" }, { runId: "hosted-1" });
    const result = (await engine.result("hosted-1", { timeoutMs: 10_000 })) as AgentResult;
    expect(result.text).toBe("Tides follow the moon.");
    expect(server.requests[before]!.body.tools).toEqual(TOOLS.anthropic);
    const journal = await readJournal(engine, "hosted-1");
    const step = journal.find((e) => e.kind === "step.completed" && /model#\d+$/.test(e.opKey ?? ""))!.data as { result: { content: { type: string }[] } };
    expect(step.result.content.map((b) => b.type)).toEqual(["hosted_tool", "hosted_tool", "text"]);
    const lines = agentRunView(journal).items.flatMap(transcriptLines).join("\n");
    expect(lines).toMatch(/hosted\s+web_search \{"query":"tides"\}/);
    expect(lines).toContain("https://example.com/tides");
  });

  it("refuses malformed providerTools with the expected shape", () => {
    expect(() => defineAgent({ name: "bad", model: MODELS["openai"]!, providerTools: { openai: "web_search" } as never })).toThrow(
      /providerTools must be \{ openai\?: object\[\]/,
    );
  });
});
