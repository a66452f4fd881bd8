import { describe, expect, it } from "vitest";
import type { EntryData } from "../../core/journal.js";
import { secret } from "../../core/secret.js";
import { decodeKeepingSecrets, encode } from "../../core/serialize.js";
import { agentRowsOf, agentRowsOfEntries } from "./agent-rows.js";

const assistant = (calls: { id: string; input: unknown }[]) => ({
  seq: 2,
  turn: 0,
  role: "assistant" as const,
  content: [{ type: "text", text: "Looking." }, ...calls.map((c) => ({ type: "tool_use", id: c.id, name: "lookup", input: c.input }))],
});

describe("agent rows of an agent.messages entry", () => {
  it("reads a tool call's arguments and result from the entry's blocks when the record leaves them out", () => {
    const called: EntryData["agent.messages"] = {
      messages: [
        assistant([
          { id: "call_0", input: { q: "a" } },
          { id: "call_1", input: secret({ token: "s3cret" }) },
        ]),
      ],
      toolCalls: [
        { idempotencyKey: "r:tool:0:call_0", callId: "call_0", tool: "lookup", turn: 0, status: "called" },
        { idempotencyKey: "r:tool:0:call_1", callId: "call_1", tool: "lookup", turn: 0, status: "called" },
      ],
    };
    const rows = agentRowsOf("r", 7, decodeKeepingSecrets(encode(called)), 1000);
    expect(rows.toolCalls.map((c) => [c.status, c.args, c.result, c.calledSeq, c.resultSeq])).toEqual([
      ["called", encode({ q: "a" }), null, 7, null],
      // A secret tool's arguments stay tagged in the row, as in the block they come from.
      ["called", encode(secret({ token: "s3cret" })), null, 7, null],
    ]);

    const answered: EntryData["agent.messages"] = {
      messages: [
        {
          seq: 3,
          turn: 0,
          role: "tool",
          content: [
            { type: "tool_result", toolUseId: "call_0", content: "found a" },
            { type: "tool_result", toolUseId: "call_1", content: secret("token ok"), isError: true },
          ],
        },
      ],
      toolCalls: [
        { idempotencyKey: "r:tool:0:call_0", callId: "call_0", tool: "lookup", turn: 0, status: "completed" },
        { idempotencyKey: "r:tool:0:call_1", callId: "call_1", tool: "lookup", turn: 0, status: "failed" },
      ],
    };
    const results = agentRowsOf("r", 8, decodeKeepingSecrets(encode(answered)), 1001);
    expect(results.toolCalls.map((c) => [c.status, c.args, c.result, c.resultSeq])).toEqual([
      ["completed", null, encode("found a"), 8],
      ["failed", null, encode(secret("token ok")), 8],
    ]);
  });

  it("matches repeated call ids in order (a provider numbering calls per response)", () => {
    const data: EntryData["agent.messages"] = {
      messages: [
        assistant([
          { id: "call_0", input: { q: "first" } },
          { id: "call_0", input: { q: "second" } },
        ]),
      ],
      toolCalls: [
        { idempotencyKey: "r:tool:0:call_0", callId: "call_0", tool: "lookup", turn: 0, status: "called" },
        { idempotencyKey: "r:tool:0:call_0#1", callId: "call_0", tool: "lookup", turn: 0, status: "called" },
      ],
    };
    expect(agentRowsOf("r", 4, data, 0).toolCalls.map((c) => c.args)).toEqual([encode({ q: "first" }), encode({ q: "second" })]);
  });

  // An entry exactly as runs journaled it before the records left their values out (main at 2138272):
  // its own args / result are used, and it writes the same rows as before.
  it("projects entries of the earlier format, which repeat the arguments and results, as they were written", () => {
    const pinned =
      '{"messages":[{"seq":2,"turn":0,"role":"assistant","content":[{"type":"tool_use","id":"call_1","name":"lookup","input":{"q":"item #1"}}]}],' +
      '"toolCalls":[{"idempotencyKey":"old:tool:0:call_1","callId":"call_1","tool":"lookup","turn":0,"status":"called","args":{"q":"item #1"}}]}';
    const answer =
      '{"messages":[{"seq":3,"turn":0,"role":"tool","content":[{"type":"tool_result","toolUseId":"call_1","content":"found (item #1)"}]}],' +
      '"toolCalls":[{"idempotencyKey":"old:tool:0:call_1","callId":"call_1","tool":"lookup","turn":0,"status":"completed","result":"found (item #1)"}]}';
    const writes = agentRowsOfEntries("old", [
      { seq: 5, kind: "agent.messages", payload: pinned, at: 10 },
      { seq: 6, kind: "step.completed", payload: "{}", at: 11 },
      { seq: 9, kind: "agent.messages", payload: answer, at: 12 },
    ]);
    expect(writes).toHaveLength(2);
    expect(writes[0]!.messages.map((m) => [m.seq, m.role, m.content, m.journalSeq])).toEqual([
      [2, "assistant", '[{"type":"tool_use","id":"call_1","name":"lookup","input":{"q":"item #1"}}]', 5],
    ]);
    expect(writes[0]!.toolCalls[0]).toMatchObject({ status: "called", args: '{"q":"item #1"}', result: null, calledSeq: 5 });
    expect(writes[1]!.toolCalls[0]).toMatchObject({ status: "completed", args: null, result: '"found (item #1)"', resultSeq: 9 });
    // A record whose values are given wins over the blocks (the earlier writer's values are the truth).
    const given = agentRowsOf(
      "old",
      1,
      {
        messages: [assistant([{ id: "x", input: { q: "block" } }])],
        toolCalls: [{ idempotencyKey: "k", callId: "x", tool: "lookup", turn: 0, status: "called", args: { q: "record" } }],
      },
      0,
    );
    expect(given.toolCalls[0]!.args).toBe(encode({ q: "record" }));
  });
});
