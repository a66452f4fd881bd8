import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { sharedEngines, STORE_KINDS } from "../../test/support/engines.js";
import { waitFor } from "../testing/wait-for.js";
import { defineAgent } from "./agent.js";
import type { ModelRequest } from "./model/model.js";
import { ScriptedModel } from "./model/scripted.js";
import type { Message } from "./model/schemas.js";
import { defineTool } from "./tool.js";

// A pinned agent run: journaled, with its rows, by the code before decision 0007 (main at 2138272),
// when an agent.messages entry's tool call records repeated the arguments and results of its message
// blocks. Its journal must still import, fork and replay, and project the rows it had.
const DIR = resolve("test/fixtures/agent-rows");
const exported = JSON.parse(readFileSync(`${DIR}/rows-v1-export.json`, "utf8")) as { journal: { kind: string; payload: string }[] };
const pinnedRows = JSON.parse(readFileSync(`${DIR}/rows-v1-rows.json`, "utf8")) as {
  toolCalls: Record<string, unknown>[];
  messages: Record<string, unknown>[];
};

const TURNS = 8;
const SUMMARY_PROMPT = "fixture-summary";

function lastToolText(messages: Message[]): string | null {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role === "tool") return m.content.at(-1)?.content ?? null;
  }
  return null;
}

/** The agent the fixture was recorded with, as it was defined then (same manifest, same script). */
function fixtureAgent() {
  const lookup = defineTool({
    name: "lookup",
    description: "Looks something up.",
    input: z.object({ q: z.string() }),
    effect: "idempotent",
    run: ({ q }) => `${"found ".repeat(30)}(${q})`,
  });
  const vault = defineTool({
    name: "vault",
    description: "Reads a secret.",
    input: z.object({ key: z.string() }),
    effect: "idempotent",
    secret: true,
    run: ({ key }) => `s3cret-for-${key}`,
  });
  const publish = defineTool({
    name: "publish",
    description: "Publishes the answer.",
    input: z.object({ text: z.string() }),
    effect: "idempotent",
    approval: true,
    run: () => "published",
  });
  const reply = (request: ModelRequest) => {
    if (request.system === SUMMARY_PROMPT) return { content: `Summary of ${JSON.stringify(request.messages).length} characters.` };
    const last = lastToolText(request.messages);
    if (last === "published") return { content: "Done." };
    const done = last === null ? 0 : last.startsWith("s3cret") ? 1 : Number(/#(\d+)\)/.exec(last)?.[1] ?? "0");
    if (done >= TURNS) return { content: [{ type: "tool_use" as const, id: "call_pub", name: "publish", input: { text: "answer" } }] };
    if (last === null) return { content: [{ type: "tool_use" as const, id: "call_v", name: "vault", input: { key: "db" } }] };
    return {
      content: [
        { type: "text" as const, text: `Turn ${done + 1}.` },
        { type: "tool_use" as const, id: `call_${done + 1}`, name: "lookup", input: { q: `item #${done + 1}` } },
      ],
    };
  };
  return defineAgent({
    name: "rows-fixture",
    model: new ScriptedModel(
      Array.from({ length: 100 }, () => reply),
      { cursor: "calls" },
    ),
    system: "You look things up.",
    tools: [lookup, vault, publish],
    context: { windowTokens: 1000, summarizeAt: 0.5, keepRecent: 4, summaryPrompt: SUMMARY_PROMPT },
    maxTokens: 100,
  });
}

const strip = (rows: readonly object[]): Record<string, unknown>[] =>
  rows.map((row) => {
    const { runId: _, createdAt: __, updatedAt: ___, ...rest } = row as Record<string, unknown>;
    return rest;
  });

describe.each(STORE_KINDS)("an agent run journaled before decision 0007, on %s", (kind) => {
  it("imports with the rows it had, forks with them, and replays against the current code", async () => {
    // The fixture is what it claims to be: its records carry the values the blocks hold.
    const records = exported.journal.filter((e) => e.kind === "agent.messages").map((e) => e.payload);
    expect(records.some((p) => p.includes('"args":') && p.includes('"status":"called"'))).toBe(true);
    expect(records.some((p) => p.includes('"result":') && p.includes('"status":"completed"'))).toBe(true);
    expect(pinnedRows.toolCalls).toHaveLength(TURNS + 1);

    const agent = fixtureAgent();
    const [engine] = await sharedEngines(kind, [agent]);
    await engine!.importRun(exported);
    expect(strip(await engine!.store.listToolCalls("rows-v1"))).toEqual(pinnedRows.toolCalls);
    expect(strip(await engine!.store.readAgentMessages("rows-v1"))).toEqual(pinnedRows.messages);

    // A fork projects the copied entries the same way (up to its fork point).
    const journal = await engine!.journal("rows-v1");
    const atSeq = journal.filter((e) => e.kind === "agent.messages").at(-3)!.seq;
    await engine!.fork("rows-v1", { atSeq, runId: "rows-v1-fork" });
    const forked = strip(await engine!.store.listToolCalls("rows-v1-fork"));
    expect(forked.length).toBeGreaterThanOrEqual(TURNS);
    expect(forked).toEqual(pinnedRows.toolCalls.filter((c) => (c.calledSeq as number) <= atSeq).map((c) => ({ ...c, ...pastFork(c, atSeq) })));

    const report = await engine!.replay("rows-v1");
    expect(report.divergence).toBeUndefined();
    expect(report.ok).toBe(true);

    // The same agent run by the current code (whose records leave the values out) writes the same rows.
    engine!.startWorker({ pollInterval: 10 });
    await engine!.start(agent, { prompt: "Look everything up." }, { runId: "rows-v2" });
    await waitFor(async () => (await engine!.listHumanRequests({ status: "pending", runId: "rows-v2" })).length > 0, {
      what: "the approval",
      timeoutMs: 60_000,
    });
    const [request] = await engine!.listHumanRequests({ status: "pending", runId: "rows-v2" });
    await engine!.respondToHuman(request!.requestId, { action: "answer", option: "approve", by: "ada" });
    expect((await engine!.result<{ text: string }>("rows-v2", { timeoutMs: 60_000 })).text).toBe("Done.");
    const same = (c: Record<string, unknown>) => [String(c.idempotencyKey).replace(/^[^:]+:/, ""), c.callId, c.tool, c.turn, c.status, c.args, c.result];
    expect((await engine!.store.listToolCalls("rows-v2")).map((c) => same(c as unknown as Record<string, unknown>))).toEqual(pinnedRows.toolCalls.map(same));
    const message = (m: Record<string, unknown>) => [m.seq, m.turn, m.role, m.kind, m.content];
    expect((await engine!.store.readAgentMessages("rows-v2")).map((m) => message(m as unknown as Record<string, unknown>))).toEqual(
      pinnedRows.messages.map(message),
    );
  });
});

/** A call answered after the fork point is still `called` in the fork. */
function pastFork(call: Record<string, unknown>, atSeq: number): Record<string, unknown> {
  const resultSeq = call.resultSeq as number | null;
  return resultSeq !== null && resultSeq > atSeq ? { status: "called", result: null, resultSeq: null } : {};
}
