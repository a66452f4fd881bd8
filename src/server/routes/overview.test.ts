import { describe, expect, it } from "vitest";
import { seedBulkRuns } from "../../../test/support/bulk-runs.js";
import { testEngine } from "../../../test/support/engines.js";
import { createServer } from "../create-server.js";
import type { OverviewSummary } from "../overview/summary.js";

type Wire = Omit<OverviewSummary, "since"> & { since: string };

describe("GET /overview", () => {
  it("counts every run by status and groups failures and spend over the chosen range, past 1,000 runs", { timeout: 60_000 }, async () => {
    const engine = await testEngine("sqlite");
    const figures = await seedBulkRuns(engine.store, 1200);
    const app = createServer(engine);

    const day = (await (await app.request("/overview")).json()) as Wire;
    // Counts cover all 1,200 runs, not a page of the newest.
    expect(day.counts.total).toBe(1200);
    expect(day.counts.byStatus).toEqual(figures.byStatus);
    // 100 failures differing by a tenant id and a number are one pattern.
    expect(day.failures.scanned).toBe(figures.recentFailures);
    expect(day.failures.patterns).toHaveLength(1);
    expect(day.failures.patterns[0]).toMatchObject({ count: figures.recentFailures, pattern: "Error: quota exceeded for tenant <id>: <n> calls" });
    expect(day.failures.steps.map((row) => [row.workflow, row.step]).sort()).toEqual([
      ["bulk-a", "call"],
      ["bulk-b", "call"],
    ]);
    expect(day.failures.steps.reduce((sum, row) => sum + row.count, 0)).toBe(figures.recentFailures);
    expect(day.spend).toMatchObject({ modelCalls: figures.recentCalls, costMicros: figures.recentCostMicros, truncated: false });
    // A parent's spend includes its child's.
    expect(day.spend.topRuns[0]).toMatchObject({ runId: figures.parent.runId, costMicros: figures.parent.costMicros, children: 1 });
    expect(day.spend.topRuns.some((run) => run.runId === "bulk-01194")).toBe(false);

    // The range moves failures and spend, never the status counts.
    const all = (await (await app.request("/overview?since=0")).json()) as Wire;
    expect(all.counts).toEqual(day.counts);
    expect(all.failures.patterns[0]!.count).toBe(figures.byStatus.failed);
    expect(all.spend.modelCalls).toBe(figures.byStatus.completed);
    expect(all.slowest.length).toBeLessThanOrEqual(5);
    expect(JSON.stringify(all).length).toBeLessThan(64 * 1024);
  });

  it("names a bad since", async () => {
    const app = createServer(await testEngine("memory"));
    const res = await app.request("/overview?since=yesterday");
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/since.*ISO 8601/);
  });
});
