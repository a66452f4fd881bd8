/**
 * A long agent for tests of agent rows and compaction: TURNS tool turns on the scripted model (a
 * ~200-character result each), a window summarized every few turns, and a last call that needs approval.
 */
import { z } from "zod";
import { defineAgent } from "../../src/agent/agent.js";
import type { ModelRequest } from "../../src/agent/model/model.js";
import { ScriptedModel } from "../../src/agent/model/scripted.js";
import type { Message } from "../../src/agent/model/schemas.js";
import { defineTool } from "../../src/agent/tool.js";
import type { Engine } from "../../src/engine/engine.js";
import { waitFor } from "../../src/testing/wait-for.js";

export const TURNS = 24;
export const SUMMARY_PROMPT = "test-summary";

export function lastToolText(messages: Message[]): string | null {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role === "tool") return m.content.at(-1)?.content ?? null;
  }
  return null;
}

/** An agent of TURNS tool turns (a ~200-character result each) and a last call that needs approval; its window is summarized every few turns. */
export function makeAgent(name: string) {
  const requests: ModelRequest[] = [];
  const lookup = defineTool({
    name: "lookup",
    description: "Looks something up.",
    input: z.object({ q: z.string() }),
    effect: "idempotent",
    run: ({ q }) => `${"found ".repeat(30)}(${q})`,
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
    requests.push(request);
    if (request.system === SUMMARY_PROMPT) return { content: `Summary of ${JSON.stringify(request.messages).length} characters.` };
    const last = lastToolText(request.messages);
    if (last === "published") return { content: "Done." };
    const done = last === null ? 0 : Number(/#(\d+)\)/.exec(last)?.[1] ?? "0");
    if (done >= TURNS) return { content: [{ type: "tool_use" as const, id: "call_pub", name: "publish", input: { text: "answer" } }] };
    return {
      content: [
        { type: "text" as const, text: `Turn ${done + 1}.` },
        { type: "tool_use" as const, id: `call_${done + 1}`, name: "lookup", input: { q: `item #${done + 1}` } },
      ],
    };
  };
  const model = new ScriptedModel(
    Array.from({ length: 200 }, () => reply),
    { cursor: "calls" },
  );
  const agent = defineAgent({
    name,
    model,
    system: "You look things up.",
    tools: [lookup, publish],
    context: { windowTokens: 1000, summarizeAt: 0.5, keepRecent: 4, summaryPrompt: SUMMARY_PROMPT },
    maxTokens: 100,
  });
  return { agent, requests };
}

export async function suspended(engine: Engine, runId: string) {
  await waitFor(async () => (await engine.getRun(runId)).status === "suspended", { what: `${runId} to wait for its approval`, timeoutMs: 60_000 });
}

export async function approve(engine: Engine, runId: string) {
  const [request] = await engine.listHumanRequests({ status: "pending", runId });
  await engine.respondToHuman(request!.requestId, { action: "answer", option: "approve", by: "ada" });
}
