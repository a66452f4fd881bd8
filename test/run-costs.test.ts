/**
 * A run's costs beyond its model calls (worker time, step time, journal bytes, tool calls by
 * tool, human wait), folded from its journal and served by `GET /runs/:id/costs` and `cairn show`.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineAgent } from "../src/agent/agent.js";
import { ScriptedModel } from "../src/agent/model/scripted.js";
import { defineTool } from "../src/agent/tool.js";
import type { RunCosts } from "../src/agent/run-costs.js";
import { waitFor } from "../src/testing/wait-for.js";
import { CairnClient } from "../src/client/client.js";
import { runCostsSchema } from "../src/core/api-schemas.js";
import { testEngine } from "./support/engines.js";
import { testServer } from "./support/server.js";

const call = (id: string, name: string, input: unknown) => ({ type: "tool_use" as const, id, name, input: input as never });

describe("run costs", () => {
  it("counts worker and step time, journal bytes, tool calls by tool and the time people took", async () => {
    const lookup = defineTool({
      name: "lookup",
      description: "Looks up.",
      input: z.object({ q: z.string() }),
      effect: "none",
      run: ({ q }) => `${q}: ${"x".repeat(600)}`,
    });
    const deploy = defineTool({
      name: "deploy",
      description: "Deploys.",
      input: z.object({ service: z.string() }),
      effect: "unsafe",
      approval: { when: () => true, timeout: "1h" },
      run: ({ service }) => `deployed ${service}`,
    });
    const model = new ScriptedModel(
      [
        { content: [call("c1", "lookup", { q: "a" }), call("c2", "lookup", { q: "b" })] },
        { content: [call("c3", "deploy", { service: "api" }), call("c4", "lookup", { q: "c" })] },
        { content: "done" },
      ],
      { modelId: "claude-sonnet-4-5" },
    );
    const agent = defineAgent({ name: "coster", model, tools: [lookup, deploy] });
    const engine = await testEngine("sqlite", { workflows: [agent], payloads: { inlineLimit: 512 } });
    const server = await testServer(engine);
    engine.startWorker({ pollInterval: 10 });
    await engine.start(agent, { prompt: "ship it" }, { runId: "costly" });
    const [approval] = await waitFor(
      async () => {
        const pending = await engine.listHumanRequests({ status: "pending", runId: "costly" });
        return pending.length > 0 ? pending : false;
      },
      { what: "the approval" },
    );
    const asked = Date.now();
    await waitFor(() => Date.now() - asked >= 150, { what: "a person taking their time" });

    const open = (await (await fetch(`${server.url}/runs/costly/costs`)).json()) as RunCosts;
    expect(open.human).toMatchObject({ requests: 1, pending: 1 });
    expect(open.human.waitMs).toBeGreaterThanOrEqual(150);

    await engine.respondToHuman(approval!.requestId, { action: "answer", option: "approve", by: "ops" });
    await engine.result("costly", { timeoutMs: 10_000 });
    const costs = await new CairnClient({ baseUrl: server.url }).runCosts("costly");
    // The answer is what the OpenAPI schema says it is.
    expect(runCostsSchema.parse(costs)).toEqual(costs);

    expect(costs.toolCalls).toEqual({ lookup: 3, deploy: 1 });
    expect(costs.human).toMatchObject({ requests: 1, pending: 0 });
    expect(costs.human.waitMs).toBeGreaterThanOrEqual(150);
    expect(costs.claims).toBeGreaterThanOrEqual(2); // started, then resumed after the approval
    expect(costs.workerMs).toBeGreaterThan(0);
    expect(costs.stepMs).toBeGreaterThan(0);
    expect(costs.stepAttempts).toBeGreaterThanOrEqual(7); // 3 model calls, 4 tools
    expect(costs.model.modelCalls).toBe(3);
    expect(costs.model.costMicros).toBeGreaterThan(0);
    // Every entry, and every payload's bytes, also those that went to blobs (the lookups' results).
    const stored = await engine.store.readJournal("costly", { limit: 10_000 });
    expect(costs.journal.entries).toBe(stored.length);
    expect(costs.journal.bytes).toBe(stored.reduce((sum, entry) => sum + Buffer.byteLength(entry.payload), 0));
    expect(costs.journal.bytes).toBeGreaterThan(3 * 600);

    expect((await fetch(`${server.url}/runs/nobody/costs`)).status).toBe(404);
  });
});
