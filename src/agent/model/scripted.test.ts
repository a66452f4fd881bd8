import { describe, expect, it } from "vitest";
import { isCairnError } from "../../core/errors.js";
import { estimateTokens } from "./estimate.js";
import type { ModelRequest } from "./model.js";
import { ScriptedModel } from "./scripted.js";
import type { Message } from "./schemas.js";

const user: Message = { role: "user", content: "research batteries" };
const call: Message = { role: "assistant", content: [{ type: "tool_use", id: "call_1", name: "search", input: { q: "batteries" } }] };
const result: Message = { role: "tool", content: [{ type: "tool_result", toolUseId: "call_1", content: "solid-state is promising" }] };

describe("ScriptedModel", () => {
  it("answers turn by turn, derives stop reasons and tool calls, and counts calls", async () => {
    const model = new ScriptedModel([
      { content: call.content as never },
      (req) => ({ content: `Summary: ${(req.messages.at(-1) as { content: { content: string }[] }).content[0]?.content}` }),
    ]);
    const first = await model.generate({ messages: [user] });
    expect(first.stopReason).toBe("tool_use");
    expect(first.toolCalls).toEqual([{ type: "tool_use", id: "call_1", name: "search", input: { q: "batteries" } }]);
    const second = await model.generate({ messages: [user, call, result] });
    expect(second.content).toEqual([{ type: "text", text: "Summary: solid-state is promising" }]);
    expect(second.stopReason).toBe("end_turn");
    expect(model.calls).toBe(2);
    expect(model.requests[1]?.messages).toHaveLength(3);
    expect(model.provider).toBe("scripted");
    expect(model.modelId).toBe("scripted");
  });

  it("is deterministic: the same request gets the same response, also from a fresh instance (a resumed worker)", async () => {
    const script = () => [{ content: call.content as never }, { content: "done" }];
    const a = await new ScriptedModel(script()).generate({ messages: [user, call, result] });
    const b = await new ScriptedModel(script()).generate({ messages: [user, call, result] });
    expect(a).toEqual(b);
    expect(a.content).toEqual([{ type: "text", text: "done" }]);
  });

  it("uses the estimate as usage unless the turn gives one", async () => {
    const request: ModelRequest = { messages: [user] };
    const res = await new ScriptedModel([{ content: "ok" }, { content: "x" }]).generate(request);
    expect(res.usage.inputTokens).toBe(estimateTokens(request).inputTokens);
    expect(res.usage.outputTokens).toBe(1);
    const custom = await new ScriptedModel([{ content: "ok", usage: { inputTokens: 10, cacheReadTokens: 5 }, stopReason: "max_tokens" }]).generate(request);
    expect(custom.usage).toEqual({ inputTokens: 10, outputTokens: 1, cacheReadTokens: 5, cacheWriteTokens: 0, reasoningTokens: 0 });
    expect(custom.stopReason).toBe("max_tokens");
  });

  it("fails clearly when the script runs out", async () => {
    const model = new ScriptedModel([{ content: call.content as never }]);
    const error = await model.generate({ messages: [user, call, result] }).catch((e: unknown) => e);
    expect(isCairnError(error, "MODEL_SCRIPT_EXHAUSTED")).toBe(true);
    expect((error as Error).message).toMatch(
      /has 1 turn\(s\) but was asked for turn 2 \(the request has 1 assistant turn\(s\); its last message is a tool result\)/,
    );
  });

  it("with cursor: calls, counts calls instead of assistant turns", async () => {
    const model = new ScriptedModel([{ content: "a" }, { content: "b" }], { cursor: "calls" });
    expect((await model.generate({ messages: [user] })).content).toEqual([{ type: "text", text: "a" }]);
    expect((await model.generate({ messages: [user] })).content).toEqual([{ type: "text", text: "b" }]);
    await expect(model.generate({ messages: [user] })).rejects.toThrow(/asked for turn 3 \(call 3\)/);
  });

  it("checks each turn's expectation", async () => {
    const model = new ScriptedModel([
      {
        content: "ok",
        expect: (req) => {
          if (req.system !== "be brief") throw new Error(`system was ${String(req.system)}`);
        },
      },
    ]);
    const error = await model.generate({ messages: [user] }).catch((e: unknown) => e);
    expect(isCairnError(error, "MODEL_SCRIPT_MISMATCH")).toBe(true);
    expect((error as Error).message).toMatch(/turn 1: .*system was undefined/);
    await expect(model.generate({ messages: [user], system: "be brief" })).resolves.toMatchObject({ stopReason: "end_turn" });
  });

  it("rejects an invalid transcript (a tool call without its result) unless validation is off", async () => {
    const bad: Message[] = [user, call, { role: "user", content: "and?" }];
    await expect(new ScriptedModel([{ content: "x" }, { content: "y" }]).generate({ messages: bad })).rejects.toThrow(
      /not a valid transcript: message 2: tool calls call_1 have no results/,
    );
    await expect(new ScriptedModel([{ content: "x" }, { content: "y" }], { validate: false }).generate({ messages: bad })).resolves.toBeDefined();
  });

  it("returns copies: mutating a response does not change the script", async () => {
    const model = new ScriptedModel([{ content: [{ type: "text", text: "same" }] }], { cursor: "calls" });
    const model2 = new ScriptedModel([{ content: [{ type: "text", text: "same" }] }]);
    const first = await model2.generate({ messages: [user] });
    (first.content[0] as { text: string }).text = "changed";
    expect((await model2.generate({ messages: [user] })).content).toEqual([{ type: "text", text: "same" }]);
    expect(model.length).toBe(1);
  });
});
