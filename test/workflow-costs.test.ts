/**
 * Costs per workflow (`GET /costs`, client `costs`, `workflowCosts`) and the cost counters of
 * `/metrics`: the totals must equal the sum of each run's own costs, over a real SQLite file and
 * through the HTTP API.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineAgent } from "../src/agent/agent.js";
import { ScriptedModel } from "../src/agent/model/scripted.js";
import { defineTool } from "../src/agent/tool.js";
import { workflowCosts } from "../src/agent/workflow-costs.js";
import { CairnClient } from "../src/client/client.js";
import { costsResponse } from "../src/core/cost-schemas.js";
import { defineWorkflow } from "../src/engine/define-workflow.js";
import { waitFor } from "../src/testing/wait-for.js";
import { testEngine } from "./support/engines.js";
import { testServer } from "./support/server.js";
import { parseExposition as metrics } from "./support/prometheus-text.js";

const call = (id: string, name: string, input: unknown) => ({ type: "tool_use" as const, id, name, input: input as never });

describe("costs per workflow", () => {
  it("add up each run's costs by workflow, filter by workflow and window, and feed /metrics", async () => {
    const lookup = defineTool({ name: "lookup", description: "Looks up.", input: z.object({ q: z.string() }), effect: "none", run: ({ q }) => `${q}!` });
    const helper = defineAgent({
      name: "helper",
      model: () =>
        new ScriptedModel([
          { content: [call("c1", "lookup", { q: "a" }), call("c2", "lookup", { q: "b" })], usage: { inputTokens: 100, outputTokens: 10 } },
          { content: "done" },
        ]),
      tools: [lookup],
      prices: { scripted: { input: 10, output: 30 } },
    });
    const review = defineWorkflow({ name: "review", run: async (ctx) => (await ctx.askHuman({ name: "ok", question: "Ship?", options: ["yes"] })).option });
    const engine = await testEngine("sqlite", { workflows: [helper, review] });
    engine.startWorker({ pollInterval: 10 });
    const server = await testServer(engine);
    const client = new CairnClient({ baseUrl: server.url });
    const before = Date.now() - 1;

    for (const runId of ["h1", "h2"]) await (await engine.start(helper, { prompt: "go" }, { runId })).result();
    const asked = await engine.start(review, undefined, { runId: "r1" });
    const [request] = await waitFor(async () => {
      const pending = await engine.listHumanRequests({ status: "pending" });
      return pending.length > 0 && pending;
    });
    await waitFor(() => new Promise((resolve) => setTimeout(() => resolve(true), 20)), { what: "a person's pause" });
    await engine.respondToHuman(request!.requestId, { action: "answer", option: "yes" });
    await asked.result();

    const totals = costsResponse.parse(await client.costs({ since: before }));
    expect(totals.runs).toBe(3);
    expect(totals.truncated).toBe(false);
    const byName = new Map(totals.workflows.map((w) => [w.workflow, w]));
    expect([...byName.keys()].sort()).toEqual(["helper", "review"]);

    // Each workflow's totals are the sums of its runs' own costs.
    const runs = await Promise.all(["h1", "h2"].map((id) => client.runCosts(id)));
    const helperTotals = byName.get("helper")!;
    expect(helperTotals.runs).toBe(2);
    expect(helperTotals.toolCalls).toEqual({ lookup: 4 });
    expect(helperTotals.journal).toEqual({
      entries: runs[0]!.journal.entries + runs[1]!.journal.entries,
      bytes: runs[0]!.journal.bytes + runs[1]!.journal.bytes,
    });
    expect(helperTotals.workerMs).toBeCloseTo(runs[0]!.workerMs + runs[1]!.workerMs, 6);
    expect(helperTotals.stepAttempts).toBe(runs[0]!.stepAttempts + runs[1]!.stepAttempts);
    expect(helperTotals.model.modelCalls).toBe(4);
    expect(helperTotals.model.costMicros).toBe(runs[0]!.model.costMicros + runs[1]!.model.costMicros);
    expect(helperTotals.model.costMicros).toBeGreaterThan(0);
    const usage = (i: number) => runs[i]!.model.usage as { inputTokens: number; outputTokens: number };
    expect(helperTotals.model.usage.inputTokens).toBe(usage(0).inputTokens + usage(1).inputTokens);
    expect(helperTotals.model.usage.outputTokens).toBe(usage(0).outputTokens + usage(1).outputTokens);
    expect(helperTotals.model.usage.inputTokens).toBeGreaterThanOrEqual(200); // 100 a run, as scripted, plus the estimated second turn
    const reviewTotals = byName.get("review")!;
    expect(reviewTotals.human).toMatchObject({ requests: 1, pending: 0 });
    expect(reviewTotals.human.waitMs).toBeGreaterThanOrEqual(20);

    // Filters: one workflow; a window that holds nothing; a bad time names the field.
    expect((await client.costs({ since: before, workflow: "review" })).workflows.map((w) => w.workflow)).toEqual(["review"]);
    expect(await client.costs({ since: Date.now() + 60_000 })).toMatchObject({ runs: 0, workflows: [] });
    const bad = await fetch(`${server.url}/costs?since=yesterday`);
    expect(bad.status).toBe(400);
    expect(JSON.stringify(await bad.json())).toMatch(/since.*ISO 8601/);

    // Bounded: past maxRuns the newest are read and the answer says so.
    const capped = await workflowCosts(engine, { since: before, maxRuns: 2, now: Date.now() });
    expect(capped).toMatchObject({ runs: 2, truncated: true });

    // The same kinds of figures as Prometheus counters, by workflow (and tool).
    const m = metrics(await (await fetch(`${server.url}/metrics`)).text());
    expect(m.get('cairn_tool_calls_total{workflow="helper",tool="lookup",outcome="completed"}')).toBe(4);
    expect(m.get('cairn_worker_seconds_total{workflow="helper"}')).toBeGreaterThan(0);
    expect(m.get('cairn_worker_seconds_total{workflow="review"}')).toBeGreaterThan(0);
    const committed = m.get('cairn_journal_entries_total{workflow="helper"}')!;
    expect(committed).toBeGreaterThan(0);
    expect(committed).toBeLessThanOrEqual(helperTotals.journal.entries);
  });
  it("reads a finished run's journal once across calls, and a retried run's again once it has run again", async () => {
    let attempts = 0;
    const flaky = defineWorkflow({
      name: "flaky",
      run: async (ctx) =>
        ctx.step(
          "try",
          () => {
            attempts += 1;
            if (attempts === 1) throw new Error("first time fails");
            return attempts;
          },
          { retry: { maxAttempts: 1 } },
        ),
    });
    const steady = defineWorkflow({ name: "steady", run: async (ctx) => ctx.step("once", () => 1) });
    const engine = await testEngine("sqlite", { workflows: [flaky, steady] });
    engine.startWorker({ pollInterval: 10 });
    const since = Date.now() - 1;
    await (await engine.start(steady, null, { runId: "s1" })).result();
    await expect((await engine.start(flaky, null, { runId: "f1" })).result()).rejects.toThrow(/first time fails/);
    const reads: string[] = [];
    const readJournal = engine.store.readJournal.bind(engine.store);
    // Reads from the start of a journal (views of a run row read only what is new since their last look).
    engine.store.readJournal = (runId, options) => {
      if (!options?.afterSeq) reads.push(runId);
      return readJournal(runId, options);
    };
    const first = await workflowCosts(engine, { since, now: Date.now() });
    expect(new Set(reads)).toEqual(new Set(["s1", "f1"]));
    const claimsOf = (totals: typeof first, workflow: string) => totals.workflows.find((w) => w.workflow === workflow)!.claims;
    expect(claimsOf(first, "flaky")).toBe(1);

    reads.length = 0;
    const again = await workflowCosts(engine, { since, now: Date.now() });
    expect(reads).toEqual([]);
    expect(again.workflows).toEqual(first.workflows);

    // A retry changes the run's row: its costs are read afresh and count the second claim.
    await engine.retry("f1");
    expect(await engine.result("f1", { timeoutMs: 10_000 })).toBe(2);
    reads.length = 0;
    const after = await workflowCosts(engine, { since, now: Date.now() });
    expect(new Set(reads)).toEqual(new Set(["f1"]));
    expect(claimsOf(after, "flaky")).toBe(2);
  });
});
