import { describe, expect, it } from "vitest";
import { z } from "zod";
import { sharedEngines, STORE_KINDS } from "../../test/support/engines.js";
import { waitFor } from "../testing/wait-for.js";
import { defineAgent, type AgentResult } from "./agent.js";
import type { Model, ModelRequest } from "./model/model.js";
import { ScriptedModel, type ScriptedTurn } from "./model/scripted.js";
import { planViews } from "./plan-view.js";
import { planTool } from "./plan-tool.js";
import { defineTool } from "./tool.js";

const fast = { pollInterval: 10 };
const call = (id: string, name: string, input: unknown) => ({ type: "tool_use" as const, id, name, input: input as never });
const lastText = (request: ModelRequest) => {
  const last = request.messages.at(-1);
  return last?.role === "tool" ? last.content.map((r) => r.content).join("\n---\n") : "";
};

describe.each(STORE_KINDS)("planTool on %s", (kind) => {
  it("lets a model create a plan, run a wave, revise the pending part and finish it; a resume runs nothing twice", async () => {
    const ledger: string[] = [];
    let hang = true;
    const fetchTool = defineTool({
      name: "fetch",
      description: "Fetches a page.",
      input: z.object({ url: z.string() }),
      effect: "idempotent",
      retry: { maxAttempts: 1 },
      run: async ({ url }) => {
        ledger.push(url);
        if (url === "bad") throw new Error("404");
        if (url === "slow" && hang) await new Promise(() => undefined);
        return `<${url}>`;
      },
    });
    const seen: string[] = [];
    const model = new ScriptedModel([
      {
        content: [
          call("p1", "plan", {
            action: "create",
            waves: 1,
            nodes: [
              { id: "a", tool: "fetch", input: { url: "a" } },
              { id: "b", tool: "fetch", input: { url: "bad" } },
              { id: "c", deps: ["b"], tool: "fetch", input: { url: "c" } },
              { id: "d", deps: ["a"], tool: "fetch", input: { url: "d" } },
            ],
          }),
        ],
      },
      (request) => {
        seen.push(lastText(request));
        return { content: [call("p2", "plan", { action: "revise", remove: ["d"], nodes: [{ id: "e", deps: ["a"], tool: "fetch", input: { url: "slow" } }] })] };
      },
      (request) => {
        seen.push(lastText(request));
        return { content: [call("p3", "plan", { action: "revise", remove: ["a"] })] };
      },
      (request) => ({ content: `done: ${(seen.push(lastText(request)), "ok")}` }),
    ]);
    const agent = defineAgent({ name: "planner", model, tools: [planTool({ tools: [fetchTool] })], snapshotEvery: 1 });
    const [one, two] = await sharedEngines(kind, [agent], [agent]);
    const worker = one!.startWorker(fast);
    await one!.start(agent, { prompt: "research" }, { runId: "pl" });
    await waitFor(() => ledger.includes("slow"), { what: "the revised node running" });
    await worker.stop({ drain: false });
    hang = false;
    two!.startWorker(fast);
    const result = (await two!.result("pl", { timeoutMs: 5000 })) as AgentResult;
    expect(result.text).toBe("done: ok");
    expect(seen[0]).toBe(
      [
        'Plan "agent" (revision 0): 1 done, 1 failed, 1 skipped, 1 pending.',
        "- a [done]: <a>",
        "- b [failed]: Error: 404",
        "- c [skipped] after b (because b did not succeed)",
        "- d [pending] after a",
      ].join("\n"),
    );
    expect(seen[1]).toContain("- e [done] after a: <slow>");
    expect(seen[1]).toContain('Plan "agent" (revision 1): 2 done, 1 failed, 1 skipped.');
    expect(seen[2]).toBe('plan: Plan "agent": cannot remove "a": it is done; only pending nodes can be edited.');
    // Every node ran once, except the one the crash interrupted.
    expect(ledger.sort()).toEqual(["a", "bad", "slow", "slow"]);
    const views = planViews(await two!.journal("pl"));
    expect(views.map((v) => v.state.nodes.map((n) => `${n.id}:${n.status}`))).toEqual([["a:done", "b:failed", "c:skipped", "e:done"]]);
  });

  it("keeps notes attached to plan nodes through summarization", async () => {
    const fetchTool = defineTool({
      name: "fetch",
      description: "Fetches a page.",
      input: z.object({ url: z.string() }),
      effect: "none",
      run: ({ url }) => `<${url}> `.repeat(40),
    });
    const seen: string[] = [];
    // Summaries remove assistant turns from the transcript, so the script is read in call order.
    const script: ScriptedTurn[] = [
      { content: [call("p1", "plan", { action: "create", waves: 0, nodes: [{ id: "a", tool: "fetch", input: { url: "a" }, note: "the source of truth" }] })] },
      { content: [call("p2", "plan", { action: "revise", waves: 0, notes: { a: "check the date first" } })] },
      { content: [call("f1", "fetch", { url: "x" })] },
      { content: [call("f2", "fetch", { url: "y" })] },
      { content: [call("p3", "plan", { action: "status" })] },
      (request) => (seen.push(lastText(request)), { content: "done" }),
    ];
    let turn = 0;
    const model: Model = {
      provider: "scripted",
      modelId: "scripted",
      generate: (request) => new ScriptedModel([script[turn++]!], { cursor: "calls" }).generate(request),
    };
    const summaries = new ScriptedModel(
      Array.from({ length: 10 }, () => ({ content: "Summary: planning." })),
      { cursor: "calls" },
    );
    const agent = defineAgent({
      name: "noter",
      model,
      tools: [planTool({ tools: [fetchTool] }), fetchTool],
      context: { windowTokens: 1000, summarizeAt: 0.3, keepRecent: 1, summaryModel: summaries },
    });
    const [engine] = await sharedEngines(kind, [agent]);
    engine!.startWorker(fast);
    await engine!.start(agent, { prompt: "plan" }, { runId: "n" });
    expect(((await engine!.result("n", { timeoutMs: 5000 })) as AgentResult).text).toBe("done");
    expect(summaries.calls).toBeGreaterThan(0);
    expect(seen[0]).toContain("- a [pending]");
    expect(seen[0]).toContain("note: check the date first");
  });

  it("refuses tools that need approval", () => {
    const risky = defineTool({ name: "risky", description: "Risky.", input: z.object({}), effect: "unsafe", approval: true, run: () => 1 });
    expect(() => planTool({ tools: [risky] })).toThrow(/needs approval/);
  });
});
