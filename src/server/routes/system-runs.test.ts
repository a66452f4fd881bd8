import { describe, expect, it } from "vitest";
import { testEngine } from "../../../test/support/engines.js";
import { testServer } from "../../../test/support/server.js";
import { parseAlertRules } from "../../core/alert-schemas.js";
import { defineWorkflow } from "../../engine/define-workflow.js";
import { evaluateAlerts } from "../alerts/evaluator.js";

const spender = defineWorkflow({
  name: "spender",
  async run(ctx) {
    await ctx.step("model", () => ({ usage: { inputTokens: 1, outputTokens: 1 }, costMicros: 7_500_000 }));
  },
});

const RULES = parseAlertRules({ rules: [{ name: "costly-run", kind: "spendPerRun", threshold: 5 }] }, "test");

interface RunsPage {
  runs: { runId: string; workflow: string }[];
}

describe("system runs (alert runs of cairn.alert)", () => {
  it("are left out of GET /runs, /run-count, /overview counts, /costs and /metrics; a workflow=cairn.alert filter and GET /alerts still show them", async () => {
    const engine = await testEngine("sqlite", { workflows: [spender] });
    const server = await testServer(engine);
    const worker = engine.startWorker({ pollInterval: 10 });
    await (await engine.start(spender, {}, { runId: "big-spender" })).result();
    await worker.stop();
    expect((await evaluateAlerts(engine.store, { now: Date.now(), evaluatorId: "t", rules: RULES })).fired).toHaveLength(1);
    // The store holds both: the user's run and the alert run.
    expect((await engine.store.countRuns()).reduce((sum, group) => sum + group.count, 0)).toBe(2);
    const get = async <T>(path: string): Promise<T> => {
      const response = await fetch(`${server.url}${path}`);
      expect(response.status, path).toBe(200);
      return (await response.json()) as T;
    };

    expect((await get<RunsPage>("/runs")).runs.map((run) => run.runId)).toEqual(["big-spender"]);
    expect((await get<RunsPage>("/runs?status=completed")).runs.map((run) => run.runId)).toEqual(["big-spender"]);
    expect((await get<RunsPage>("/runs?workflow=cairn.alert")).runs.map((run) => run.runId)).toEqual(["cairn.alert/costly-run/run/big-spender"]);
    expect(await get("/run-count")).toEqual({ total: 1, exact: true });
    expect(await get("/run-count?workflow=cairn.alert")).toEqual({ total: 1, exact: true });

    const overview = await get<{ counts: { total: number; byStatus: Record<string, number> }; alerts: { runId: string }[] }>("/overview");
    expect(overview.counts).toEqual({ total: 1, byStatus: { completed: 1 } });
    expect(overview.alerts.map((alert) => alert.runId)).toEqual(["cairn.alert/costly-run/run/big-spender"]);
    expect((await get<{ alerts: unknown[] }>("/alerts")).alerts).toHaveLength(1);

    const costs = await get<{ runs: number; workflows: { workflow: string }[] }>("/costs");
    expect([costs.runs, costs.workflows.map((row) => row.workflow)]).toEqual([1, ["spender"]]);
    expect((await get<{ workflows: { workflow: string }[] }>("/costs?workflow=cairn.alert")).workflows.map((row) => row.workflow)).toEqual(["cairn.alert"]);

    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).toContain('cairn_runs{workflow="spender",status="completed"} 1');
    expect(metrics).not.toContain('workflow="cairn.alert"');
  });
});
