import { describe, expect, it } from "vitest";
import { onCleanup, testEngine } from "../../../test/support/engines.js";
import { parseExposition } from "../../../test/support/prometheus-text.js";
import { defineWorkflow } from "../../engine/define-workflow.js";
import { createServer } from "../create-server.js";

describe("GET /metrics with metricsTags", () => {
  it("counts runs by status for the declared tag values only, so the series stay bounded", async () => {
    const job = defineWorkflow({
      name: "job",
      run: async (ctx, input: { fail?: boolean }) => ctx.step("s", () => (input.fail ? Promise.reject(new Error("no")) : 1)),
    });
    const engine = await testEngine("sqlite", { workflows: [job] });
    const worker = engine.startWorker({ pollInterval: 10 });
    onCleanup(() => worker.stop());
    const runs: { tags: Record<string, string>; fail: boolean }[] = [
      { tags: { tier: "free" }, fail: false },
      { tags: { tier: "free" }, fail: true },
      { tags: { tier: "pro" }, fail: false },
      { tags: { tier: "enterprise" }, fail: false }, // not declared: no series
      { tags: { region: "eu" }, fail: false },
    ];
    for (const { tags, fail } of runs) await (await engine.start(job, { fail }, { tags })).result().catch(() => undefined);

    const app = createServer(engine, { metricsTags: { tier: ["free", "pro"] } });
    const text = await (await app.request("/metrics")).text();
    const m = parseExposition(text);
    expect(m.get('cairn_runs_by_tag{tag="tier",value="free",status="completed"}')).toBe(1);
    expect(m.get('cairn_runs_by_tag{tag="tier",value="free",status="failed"}')).toBe(1);
    expect(m.get('cairn_runs_by_tag{tag="tier",value="pro",status="completed"}')).toBe(1);
    expect(m.get('cairn_runs_by_tag{tag="tier",value="pro",status="failed"}')).toBe(0);
    expect(text).not.toContain("enterprise");
    expect(text).not.toContain('tag="region"');

    // Without the option there is no such series.
    expect(await (await createServer(engine).request("/metrics")).text()).not.toMatch(/^cairn_runs_by_tag\{/m);
    // Too many pairs is refused where the server is made, with the bound named.
    const many = { k: Array.from({ length: 51 }, (_, i) => `v${i}`) };
    expect(() => createServer(engine, { metricsTags: many })).toThrow(/at most 50/);
  });
});
