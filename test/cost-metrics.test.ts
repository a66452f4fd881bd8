/**
 * The cost series of `/metrics` against what the store holds for known runs: journal bytes (the
 * payload bytes of the entries the workers committed), human wait by workflow, worker time, tool
 * calls by tool and model spend. Its `.pg.test.ts` twin runs it on PostgreSQL.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineAgent } from "../src/agent/agent.js";
import { ScriptedModel } from "../src/agent/model/scripted.js";
import { readRunCosts } from "../src/agent/run-costs.js";
import { defineTool } from "../src/agent/tool.js";
import { defineWorkflow } from "../src/engine/define-workflow.js";
import { createServer } from "../src/server/create-server.js";
import { waitFor } from "../src/testing/wait-for.js";
import { onCleanup, STORE_KINDS, testEngine } from "./support/engines.js";
import { parseExposition } from "./support/prometheus-text.js";

const call = (id: string, name: string, input: unknown) => ({ type: "tool_use" as const, id, name, input: input as never });

/** Entries a worker does not commit: the start writes `run.created`, the claim `run.claimed`. */
const NOT_COMMITTED_BY_WORKERS = new Set(["run.created", "run.claimed"]);

describe.each(STORE_KINDS)("cost metrics (%s)", (kind) => {
  it("count journal bytes, human wait, worker time and tool calls by workflow, as the store holds them", async () => {
    const lookup = defineTool({ name: "lookup", description: "Looks up.", input: z.object({ q: z.string() }), effect: "none", run: ({ q }) => `${q}!` });
    const fetchPage = defineTool({ name: "fetch_page", description: "Fetches.", input: z.object({ url: z.string() }), effect: "none", run: ({ url }) => url });
    const helper = defineAgent({
      name: "helper",
      model: () =>
        new ScriptedModel([
          { content: [call("c1", "lookup", { q: "a" }), call("c2", "fetch_page", { url: "x".repeat(3000) })], usage: { inputTokens: 100, outputTokens: 10 } },
          { content: [call("c3", "lookup", { q: "b" })], usage: { inputTokens: 50, outputTokens: 5 } },
          { content: "done" },
        ]),
      tools: [lookup, fetchPage],
      prices: { scripted: { input: 10, output: 30 } },
    });
    const review = defineWorkflow({ name: "review", run: async (ctx) => (await ctx.askHuman({ name: "ok", question: "Ship?", options: ["yes"] })).option });
    const engine = await testEngine(kind, { workflows: [helper, review] });
    const app = createServer(engine); // counting starts here
    const worker = engine.startWorker({ pollInterval: 10 });
    onCleanup(() => worker.stop());

    for (const runId of ["h1", "h2"]) await (await engine.start(helper, { prompt: "go" }, { runId })).result({ timeoutMs: 10_000 });
    const asked = await engine.start(review, undefined, { runId: "r1" });
    const [request] = await waitFor(async () => {
      const pending = await engine.listHumanRequests({ status: "pending" });
      return pending.length > 0 && pending;
    });
    // Let a person's time pass (a wait of 0 s would pass a histogram that observed nothing useful).
    await waitFor(() => Date.now() - request!.createdAt >= 30 && true, { what: "30 ms since the question" });
    await engine.respondToHuman(request!.requestId, { action: "answer", option: "yes" });
    expect(await asked.result({ timeoutMs: 10_000 })).toBe("yes");
    const answered = (await engine.store.getHumanRequest(request!.requestId))!;

    const m = parseExposition(await (await app.request("/metrics")).text());

    // Journal bytes: exactly the payload bytes of the entries the workers wrote, summed over the runs.
    let helperBytes = 0;
    let helperEntries = 0;
    for (const runId of ["h1", "h2"]) {
      for (const entry of await engine.store.readJournal(runId, { afterSeq: 0, limit: 1000 })) {
        if (NOT_COMMITTED_BY_WORKERS.has(entry.kind)) continue;
        helperBytes += Buffer.byteLength(entry.payload);
        helperEntries += 1;
      }
    }
    expect(helperBytes).toBeGreaterThan(6000); // the 3,000-character tool input, journaled twice per run
    expect(m.get('cairn_journal_bytes_total{workflow="helper"}')).toBe(helperBytes);
    expect(m.get('cairn_journal_entries_total{workflow="helper"}')).toBe(helperEntries);
    // …and within the run's own figure (GET /runs/:id/costs), which also counts the start and claims.
    const runCosts = await Promise.all(["h1", "h2"].map((id) => readRunCosts(engine, id, Date.now())));
    const perRun = runCosts.reduce((sum, c) => sum + c.journal.bytes, 0);
    expect(perRun).toBeGreaterThan(helperBytes);
    expect(m.get('cairn_journal_bytes_total{workflow="review"}')).toBeGreaterThan(0);

    // Human wait, by workflow: the one answer, from the question to the answer as the store records them.
    expect(m.get('cairn_human_wait_seconds_count{workflow="review"}')).toBe(1);
    expect(m.get('cairn_human_wait_seconds_sum{workflow="review"}')).toBeCloseTo((answered.answeredAt! - answered.createdAt) / 1000, 6);
    expect(m.get('cairn_human_wait_seconds_sum{workflow="review"}')).toBeGreaterThanOrEqual(0.03);
    expect(m.has('cairn_human_wait_seconds_count{workflow="helper"}')).toBe(false);

    // Tool calls by tool, worker time and spend, as the runs' own costs have them.
    expect(m.get('cairn_tool_calls_total{workflow="helper",tool="lookup",outcome="completed"}')).toBe(4);
    expect(m.get('cairn_tool_calls_total{workflow="helper",tool="fetch_page",outcome="completed"}')).toBe(2);
    const workerSeconds = m.get('cairn_worker_seconds_total{workflow="helper"}')!;
    expect(workerSeconds).toBeGreaterThan(0);
    // In seconds, near the journal's claim-to-end time (measured in process, so not to the millisecond).
    expect(workerSeconds).toBeLessThan((runCosts.reduce((sum, c) => sum + c.workerMs, 0) + 1000) / 1000);
    const spend = runCosts.reduce((sum, c) => sum + c.model.costMicros, 0);
    expect(spend).toBeGreaterThan(0);
    expect(m.get('cairn_budget_spend_usd_total{workflow="helper"}')).toBeCloseTo(spend / 1e6, 9);
  });
});
