import { describe, expect, it } from "vitest";
import { onCleanup, testEngine } from "../../../test/support/engines.js";
import { newEntry } from "../../core/journal.js";
import { defineWorkflow } from "../../engine/define-workflow.js";
import { waitFor } from "../../testing/wait-for.js";
import { createServer } from "../create-server.js";
import { parseExposition as parse } from "../../../test/support/prometheus-text.js";

describe("GET /metrics", () => {
  it("counts runs by status, steps, retries, step latency, spend, human waits, lease losses and workers", async () => {
    let failures = 1;
    let release: (() => void) | undefined;
    const agentish = defineWorkflow({
      name: "agentish",
      async run(ctx) {
        await ctx.step("model", () => ({ text: "hi", costMicros: 1500 }));
        await ctx.step("model", () => ({ text: "again", costMicros: 2500 }));
        await ctx.step(
          "flaky",
          () => {
            if (failures-- > 0) throw new Error("once");
            return 1;
          },
          { retry: { maxAttempts: 3, initialDelay: 1 } },
        );
        const reply = await ctx.askHuman({ name: "ok", question: "Ship?", options: ["yes", "no"] });
        return reply.option;
      },
    });
    const slow = defineWorkflow({
      name: "slow",
      async run(ctx) {
        return ctx.step("wait", () => (release ? "done" : new Promise<string>((resolve) => (release = () => resolve("done")))));
      },
    });
    const engine = await testEngine("sqlite", { workflows: [agentish, slow] });
    const app = createServer(engine);
    const worker = engine.startWorker({ pollInterval: 10 });
    onCleanup(() => worker.stop());
    await engine.store.createRun({ runId: "parked", workflow: "other", version: "1", input: "null" }, Date.now());

    const run = await engine.start(agentish, undefined, { runId: "a1" });
    const [request] = await waitFor(async () => {
      const pending = await engine.listHumanRequests({ status: "pending" });
      return pending.length > 0 ? pending : undefined;
    });
    await engine.respondToHuman(request!.requestId, { action: "answer", option: "yes" });
    expect(await run.result({ timeoutMs: 5000 })).toBe("yes");

    // Another actor fences the worker out while its step runs: the outcome's commit finds the lease lost.
    const held = await engine.start(slow, undefined, { runId: "s1" });
    await waitFor(() => release);
    await engine.store.controlRun("s1", ["running"], newEntry("run.released", null, { workerId: "someone-else" }), Date.now());
    release!();
    expect(await held.result({ timeoutMs: 5000 })).toBe("done");

    const res = await app.request("/metrics");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
    const text = await res.text();
    const m = parse(text);
    expect(m.get('cairn_runs{workflow="agentish",status="completed"}')).toBe(1);
    expect(m.get('cairn_runs{workflow="agentish",status="failed"}')).toBe(0);
    expect(m.get('cairn_runs{workflow="other",status="pending"}')).toBe(1);
    expect(m.get("cairn_workers")).toBe(1);
    expect(m.get('cairn_steps_total{workflow="agentish",outcome="completed"}')).toBe(3);
    expect(m.get('cairn_steps_total{workflow="agentish",outcome="retry"}')).toBe(1);
    expect(m.get('cairn_step_retries_total{workflow="agentish"}')).toBe(1);
    expect(m.get('cairn_step_duration_seconds_count{workflow="agentish",outcome="completed"}')).toBe(3);
    expect(m.get('cairn_step_duration_seconds_bucket{workflow="agentish",outcome="completed",le="+Inf"}')).toBe(3);
    expect(m.get('cairn_budget_spend_usd_total{workflow="agentish"}')).toBeCloseTo(0.004, 10);
    expect(m.get('cairn_human_wait_seconds_count{workflow="agentish"}')).toBe(1);
    expect(m.get('cairn_lease_losses_total{workflow="slow"}')).toBe(1);
    expect(text).toContain("# TYPE cairn_step_duration_seconds histogram");
  });

  it("cairn_human_oldest_pending_seconds is the age of the oldest unanswered question in the store, 0 once answered", async () => {
    const ask = defineWorkflow({
      name: "asks",
      async run(ctx) {
        return (await ctx.askHuman({ name: "ok", question: "Ship?", options: ["yes", "no"] })).option;
      },
    });
    // The asking engine's clock runs an hour behind: its question looks an hour old to the scrape.
    const engine = await testEngine("sqlite", { workflows: [ask], clock: () => Date.now() - 3_600_000 });
    const worker = engine.startWorker({ pollInterval: 10 });
    onCleanup(() => worker.stop());
    const app = createServer(engine);
    expect(parse(await (await app.request("/metrics")).text()).get("cairn_human_oldest_pending_seconds")).toBe(0);
    const run = await engine.start(ask, undefined, { runId: "q1" });
    const [request] = await waitFor(async () => {
      const pending = await engine.listHumanRequests({ status: "pending" });
      return pending.length > 0 ? pending : undefined;
    });
    const age = parse(await (await app.request("/metrics")).text()).get("cairn_human_oldest_pending_seconds")!;
    expect(age).toBeGreaterThanOrEqual(3599);
    expect(age).toBeLessThan(3700);
    await engine.respondToHuman(request!.requestId, { action: "answer", option: "yes" });
    expect(await run.result({ timeoutMs: 5000 })).toBe("yes");
    expect(parse(await (await app.request("/metrics")).text()).get("cairn_human_oldest_pending_seconds")).toBe(0);
  });
});
