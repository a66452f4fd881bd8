import { describe, expect, it } from "vitest";
import { z } from "zod";
import { STORE_KINDS, testEngine } from "../../test/support/engines.js";
import { waitFor } from "../testing/wait-for.js";
import { defineAgent, type AgentResult } from "./agent.js";
import { addCall, addTotals, emptyTotals } from "./budget.js";
import { ScriptedModel } from "./model/scripted.js";
import { defineTool } from "./tool.js";

const fast = { pollInterval: 10 };
const echo = defineTool({ name: "echo", description: "Echoes.", input: z.object({ text: z.string() }), effect: "none", run: ({ text }) => text });
const script = () => [{ content: [{ type: "tool_use" as const, id: "call_0", name: "echo", input: { text: "hi" } }] }, { content: "done" }];

describe.each(STORE_KINDS)("models without a price on %s", (kind) => {
  it("run without a cost limit and report those calls' cost as unknown, not $0", async () => {
    const model = new ScriptedModel(script(), { modelId: "local/llama-3.3-70b-q4" });
    const agent = defineAgent({ name: "local", model, tools: [echo] });
    const engine = await testEngine(kind, { workflows: [agent] });
    engine.startWorker(fast);
    await engine.start(agent, { prompt: "go" }, { runId: "u" });
    const result = (await engine.result("u", { timeoutMs: 5000 })) as AgentResult;
    expect(result.text).toBe("done");
    expect(result.totals).toMatchObject({ steps: 2, costMicros: 0, unpricedCalls: 2 });
    expect(model.calls).toBe(2);
  });

  it("refuse before any call when a cost limit is set, naming defineAgent({ prices })", async () => {
    const model = new ScriptedModel(script(), { modelId: "local/llama-3.3-70b-q4" });
    const agent = defineAgent({ name: "local-capped", model, tools: [echo], budget: { maxCostUsd: 1 } });
    const engine = await testEngine(kind, { workflows: [agent] });
    engine.startWorker(fast);
    await engine.start(agent, { prompt: "go" }, { runId: "c" });
    await waitFor(async () => (await engine.getRun("c")).status === "failed", { what: "the run to fail" });
    const { error } = await engine.getRun("c");
    expect(error).toMatchObject({ code: "MODEL_PRICE_UNKNOWN" });
    expect(error!.message).toContain("defineAgent({ prices: {");
    expect(error!.message).toContain('"local/llama-3.3-70b-q4"');
    expect(model.calls).toBe(0);
    // With the price given, the same agent runs and is charged.
    const priced = defineAgent({
      name: "local-priced",
      model: new ScriptedModel(script(), { modelId: "local/llama-3.3-70b-q4" }),
      tools: [echo],
      budget: { maxCostUsd: 1 },
      prices: { "local/llama-3.3-70b-q4": { input: 0.5, output: 1 } },
    });
    const engine2 = await testEngine(kind, { workflows: [priced] });
    engine2.startWorker(fast);
    await engine2.start(priced, { prompt: "go" }, { runId: "p" });
    const result = (await engine2.result("p", { timeoutMs: 5000 })) as AgentResult;
    expect(result.totals.costMicros).toBeGreaterThan(0);
    expect(result.totals.unpricedCalls).toBeUndefined();
  });
});

describe("agent totals", () => {
  const usage = { inputTokens: 10, outputTokens: 5, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 };
  it("keep possibly billed spend and unpriced calls apart from the billed cost, also across child runs", () => {
    const parent = addCall(emptyTotals(), usage, 100, 40);
    expect(parent).toMatchObject({ costMicros: 100, possiblyBilledMicros: 40, steps: 1 });
    const child = addCall(addCall(emptyTotals(), usage, null), usage, 7);
    expect(child).toMatchObject({ costMicros: 7, unpricedCalls: 1, steps: 2 });
    expect(addTotals(parent, child)).toMatchObject({ costMicros: 107, possiblyBilledMicros: 40, unpricedCalls: 1, steps: 3 });
    // Totals journaled before these fields existed still add up.
    const old = { usage, costMicros: 5, steps: 1, toolCalls: 0 };
    expect(addCall(old, usage, 5)).toEqual({ usage: { ...usage, inputTokens: 20, outputTokens: 10 }, costMicros: 10, steps: 2, toolCalls: 0 });
  });
});
