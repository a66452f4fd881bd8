// The alert evaluator at volume: 5,000 runs in every state (test/support/bulk-runs.ts) on the
// memory store and SQLite (PostgreSQL: alerts-volume.pg.test.ts). One evaluation of a rule of every kind fires what the figures say, once, and a
// second evaluation fires nothing.
import { describe, expect, it } from "vitest";
import { parseAlertRules } from "../src/core/alert-schemas.js";
import { evaluateAlerts } from "../src/server/alerts/evaluator.js";
import { seedBulkRuns } from "./support/bulk-runs.js";
import { STORE_KINDS, testEngine } from "./support/engines.js";

const COUNT = 5000;
describe.each(STORE_KINDS)(`alerts over ${COUNT} runs on %s`, (kind) => {
  it(`evaluates every rule kind over ${COUNT} runs, firing each breach once`, { timeout: 120_000 }, async () => {
    const engine = await testEngine(kind);
    const now = Date.now();
    const figures = await seedBulkRuns(engine.store, COUNT, now);
    const rules = parseAlertRules(
      {
        rules: [
          { name: "run", kind: "spendPerRun", threshold: 0.0009 },
          { name: "wf", kind: "spendPerWorkflow", threshold: 0.01, window: "1d" },
          { name: "day", kind: "spendPerDay", threshold: 1000 },
          { name: "fail", kind: "failureRate", threshold: 0.3, window: "31d" },
          { name: "stuck", kind: "stuckRuns", threshold: 1 },
          { name: "wait", kind: "humanWaiting", threshold: "1h" },
        ],
      },
      "test",
    );
    const started = performance.now();
    const first = await evaluateAlerts(engine.store, { now, evaluatorId: "v", rules });
    const firstMs = performance.now() - started;
    const again = performance.now();
    const second = await evaluateAlerts(engine.store, { now, evaluatorId: "v", rules });
    const secondMs = performance.now() - again;
    console.log(`${kind}: ${COUNT} runs, first evaluation ${firstMs.toFixed(0)} ms (${first.fired.length} fired), second ${secondMs.toFixed(0)} ms`);
    const byRule = (name: string) => first.fired.filter((a) => a.rule === name);
    // Only the parent whose child also spent reaches 2 calls' worth ($0.00091).
    expect(byRule("run").map((a) => a.runIds[0])).toEqual([figures.parent.runId]);
    expect(byRule("wf").length).toBeGreaterThan(0);
    expect(byRule("day")).toEqual([]);
    // 2 failed of every 5 finished (2 failed, 3 completed per 10): 40%.
    expect(byRule("fail").length).toBeGreaterThan(0);
    expect(byRule("fail")[0]!.value).toBeCloseTo(0.4, 1);
    expect(byRule("stuck")).toHaveLength(1);
    expect(second.fired).toEqual([]);

    // The alert runs are in the store, but the users' figures (countRuns with excludeSystem, as the
    // overview and /metrics count) are the seeded runs' alone, and cost about what an unfiltered count does.
    const total = (groups: { count: number }[]) => groups.reduce((sum, group) => sum + group.count, 0);
    const timed = async (filter?: { excludeSystem: true }) => {
      const at = performance.now();
      const groups = await engine.store.countRuns(filter);
      return { groups, ms: performance.now() - at };
    };
    const all = await timed();
    const own = await timed({ excludeSystem: true });
    console.log(
      `${kind}: countRuns over ${COUNT} runs and ${first.fired.length} alert runs: all ${all.ms.toFixed(1)} ms, without system runs ${own.ms.toFixed(1)} ms`,
    );
    expect(total(all.groups)).toBe(COUNT + first.fired.length);
    expect(total(own.groups)).toBe(COUNT);
    expect(own.groups.map((group) => group.workflow).filter((workflow) => workflow.startsWith("cairn."))).toEqual([]);
    const listed = await engine.store.listRuns({ excludeSystem: true, limit: 1000, previewBytes: 0 });
    expect(listed.runs).toHaveLength(1000);
    expect(listed.runs.filter((run) => run.workflow.startsWith("cairn."))).toEqual([]);
  });
});
