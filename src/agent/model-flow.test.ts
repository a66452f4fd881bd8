import { describe, expect, it } from "vitest";
import { STORE_KINDS, testEngine } from "../../test/support/engines.js";
import { waitFor } from "../testing/wait-for.js";
import { defineAgent } from "./agent.js";
import type { Model, ModelResponse } from "./model/model.js";

/** A model that answers once released, counting the calls in flight. */
function gatedModel() {
  const state = { inFlight: 0, peak: 0, gates: [] as (() => void)[] };
  const model: Model = {
    provider: "scripted",
    modelId: "gated-1",
    async generate(): Promise<ModelResponse> {
      state.inFlight += 1;
      state.peak = Math.max(state.peak, state.inFlight);
      await new Promise<void>((resolve) => state.gates.push(resolve));
      state.inFlight -= 1;
      return {
        content: [{ type: "text", text: "done" }],
        toolCalls: [],
        stopReason: "end_turn",
        usage: { inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 },
        model: "gated-1",
        raw: null,
      };
    },
  };
  return { model, state };
}

describe.each(STORE_KINDS)("agent modelFlow on %s", (kind) => {
  it("limits concurrent model calls per tenant across runs; another tenant is not held up", async () => {
    const { model, state } = gatedModel();
    const agent = defineAgent({
      name: "tenant-agent",
      model,
      prices: { "gated-1": { input: 1, output: 1, cacheRead: 0, cacheWrite: 0 } },
      modelFlow: (input) => ({ concurrency: { key: String(input.tenant), limit: 1 } }),
    });
    const engine = await testEngine(kind, { workflows: [agent] });
    await engine.start(agent, { prompt: "hi", tenant: "a" } as never, { runId: "a1" });
    await engine.start(agent, { prompt: "hi", tenant: "a" } as never, { runId: "a2" });
    engine.startWorker({ pollInterval: 10 });
    await waitFor(() => state.gates.length === 1, { timeoutMs: 5000 });
    await waitFor(async () => (await engine.listRuns({ status: "suspended" })).runs.length === 1, { timeoutMs: 5000 });
    // Either of tenant a's runs may win the slot (two workers' claims race on PostgreSQL); the other waits on it.
    const [waiting] = (await engine.listRuns({ status: "suspended" })).runs;
    expect(["a1", "a2"]).toContain(waiting!.runId);
    await engine.start(agent, { prompt: "hi", tenant: "b" } as never, { runId: "b1" });
    await waitFor(() => state.gates.length === 2, { timeoutMs: 5000 });
    expect(state.inFlight).toBe(2);
    // Release calls as they come until all three runs are done; the waiting run's call starts only after the other's slot frees.
    const done = async () => (await engine.listRuns({ status: "completed" })).runs.length === 3;
    for (;;) {
      await waitFor(async () => state.gates.length > 0 || (await done()), { timeoutMs: 5000 });
      if (state.gates.length === 0) break;
      state.gates.shift()!();
    }
    expect(state.peak).toBe(2);
    const journal = await engine.journal(waiting!.runId);
    expect(journal.some((e) => e.kind === "run.suspended" && JSON.stringify(e.data).includes('"flow"'))).toBe(true);
  });
});
