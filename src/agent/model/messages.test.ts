import { describe, expect, it } from "vitest";
import { decode, encode } from "../../core/serialize.js";
import { addUsage, checkRequest, emptyUsage, textOf, toJson, transcriptProblems } from "./messages.js";
import { MessageSchema, ModelResponseSchema, type Message } from "./schemas.js";
import { ScriptedModel } from "./scripted.js";

const call = (id: string, name = "t") => ({ type: "tool_use" as const, id, name, input: {} });
const result = (id: string) => ({ type: "tool_result" as const, toolUseId: id, content: "ok" });

describe("transcriptProblems", () => {
  it("accepts a valid transcript, including trailing calls not yet answered", () => {
    const ok: Message[] = [
      { role: "user", content: "go" },
      { role: "assistant", content: [call("a"), call("b")] },
      { role: "tool", content: [result("b"), result("a")] },
      { role: "assistant", content: [{ type: "text", text: "done" }, call("c")] },
    ];
    expect(transcriptProblems(ok)).toEqual([]);
  });

  it("finds missing, duplicate and stray results, and misplaced tool messages", () => {
    expect(transcriptProblems([{ role: "assistant", content: [] }])[0]?.problem).toMatch(/first message/);
    const problems = transcriptProblems([
      { role: "user", content: "go" },
      { role: "assistant", content: [call("a"), call("b")] },
      { role: "tool", content: [result("a"), result("a"), result("z")] },
      { role: "tool", content: [result("b")] },
    ]).map((p) => p.problem);
    expect(problems).toEqual([
      "tool call a (t) has 2 results, expected exactly 1",
      "tool call b (t) has 0 results, expected exactly 1",
      "tool result for z answers no call of the preceding assistant turn",
      "a tool message must follow an assistant turn that made tool calls",
    ]);
  });
});

describe("schemas and helpers", () => {
  it("validates messages at the boundary", () => {
    expect(MessageSchema.safeParse({ role: "user", content: "" }).success).toBe(true);
    expect(MessageSchema.safeParse({ role: "tool", content: [] }).success).toBe(false);
    expect(MessageSchema.safeParse({ role: "assistant", content: [{ type: "tool_use", id: "", name: "x", input: {} }] }).success).toBe(false);
    expect(() => checkRequest({ messages: [], tools: [{ name: "bad name!", description: "", inputSchema: {} }] })).toThrow(/tools\.0\.name/);
    expect(() => checkRequest({ messages: [], maxTokens: 0 })).toThrow(/maxTokens/);
  });

  it("a response survives the journal codec unchanged", async () => {
    const res = await new ScriptedModel([{ content: [{ type: "thinking", thinking: "t", signature: "sig" }, call("a")] }]).generate({
      messages: [{ role: "user", content: "x" }],
    });
    const back = decode(encode(res));
    expect(back).toEqual(res);
    expect(ModelResponseSchema.parse(back)).toEqual(res);
  });

  it("sums usage, joins text, and makes values JSON-safe", () => {
    const u = { inputTokens: 1, outputTokens: 2, cacheReadTokens: 3, cacheWriteTokens: 4, reasoningTokens: 5 };
    expect(addUsage(addUsage(emptyUsage(), u), u)).toEqual({ inputTokens: 2, outputTokens: 4, cacheReadTokens: 6, cacheWriteTokens: 8, reasoningTokens: 10 });
    expect(textOf([{ type: "text", text: "a" }, call("x"), { type: "text", text: "b" }])).toBe("a\nb");
    expect(toJson({ at: new Date(0), gone: undefined, n: 1n })).toEqual({ at: "1970-01-01T00:00:00.000Z", n: "1" });
  });
});
