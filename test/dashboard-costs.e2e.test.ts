// The costs page in a real browser (Debian's Chromium via playwright-core) against a real server on a
// SQLite file: each workflow's runs, model spend (sub-cent), tokens, worker time, journal bytes, tool
// calls by tool and people's time, checked against what the store holds (read here from the journals,
// not through the code that adds the figures up); the range picker by keyboard; a hostile workflow
// name shown as text; an axe-core scan. Screenshots at 1366×900 and 800×900 go to test-artifacts/costs/.
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { defineAgent } from "../src/agent/agent.js";
import { ScriptedModel } from "../src/agent/model/scripted.js";
import { defineTool } from "../src/agent/tool.js";
import { defineWorkflow } from "../src/engine/define-workflow.js";
import type { Engine } from "../src/engine/engine.js";
import type { RunningServer } from "../src/server/serve.js";
import { waitFor } from "../src/testing/wait-for.js";
import { AXE_SOURCE, BenchPages, haveChromium, startDashboardBench, type DashboardBench } from "./support/dashboard-browser.js";

const ARTIFACTS = join(import.meta.dirname, "..", "test-artifacts", "costs");
const HOSTILE = `<img src=x onerror="window.__costsXss=1">`;

const call = (id: string, name: string, input: unknown) => ({ type: "tool_use" as const, id, name, input: input as never });
const lookup = defineTool({ name: "lookup", description: "Looks up.", input: z.object({ q: z.string() }), effect: "none", run: ({ q }) => `${q}!` });
const fetchPage = defineTool({ name: "fetch_page", description: "Fetches.", input: z.object({ url: z.string() }), effect: "none", run: ({ url }) => url });

/** Two turns of tool calls (lookup twice, fetch_page once), then an answer; priced, so each run costs a fraction of a cent. */
const researcher = defineAgent({
  name: "researcher",
  model: () =>
    new ScriptedModel([
      {
        content: [call("c1", "lookup", { q: "a" }), call("c2", "fetch_page", { url: "https://example.com/" + "p".repeat(2000) })],
        usage: { inputTokens: 120, outputTokens: 12 },
      },
      { content: [call("c3", "lookup", { q: "b" })], usage: { inputTokens: 90, outputTokens: 9 } },
      { content: "done" },
    ]),
  tools: [lookup, fetchPage],
  prices: { scripted: { input: 1, output: 3 } },
});

/** Asks a person once. */
const review = defineWorkflow({ name: "review", run: async (ctx) => (await ctx.askHuman({ name: "ok", question: "Ship?", options: ["yes"] })).option });

/** What the store holds for one workflow, read straight from the runs' journals. */
interface Expected {
  runs: number;
  costMicros: number;
  inputTokens: number;
  outputTokens: number;
  journalBytes: number;
  journalEntries: number;
}

describe.skipIf(!haveChromium && process.env.CI !== "true")("the costs page in a browser", () => {
  let bench: DashboardBench;
  let engine: Engine;
  let server: RunningServer;
  const tabs = new BenchPages(() => bench);
  const open = (path: string, width?: number, bypassCSP?: boolean) => tabs.open(path, width, bypassCSP);

  beforeAll(async () => {
    bench = await startDashboardBench({ prefix: "cairn-costs-", artifacts: ARTIFACTS, workflows: [researcher, review], worker: { pollInterval: 10 } });
    ({ engine, server } = bench);
    for (const runId of ["r1", "r2"]) await (await engine.start(researcher, { prompt: "go" }, { runId })).result({ timeoutMs: 15_000 });
    const asked = await engine.start(review, undefined, { runId: "q1" });
    const [request] = await waitFor(async () => {
      const pending = await engine.listHumanRequests({ status: "pending" });
      return pending.length > 0 && pending;
    });
    await waitFor(() => Date.now() - request!.createdAt >= 1200 && true, { what: "a person's second", timeoutMs: 5000 });
    await engine.respondToHuman(request!.requestId, { action: "answer", option: "yes" });
    await asked.result({ timeoutMs: 15_000 });
    // A run of a workflow no code registers, named to break out of the markup if it were not escaped.
    await engine.store.createRun({ runId: "hostile", workflow: HOSTILE, version: "1", input: "null" }, Date.now());
  }, 60_000);

  afterAll(async () => {
    await bench?.close();
  });

  afterEach(async () => {
    await tabs.close();
    expect(tabs.errors, "errors thrown in the page").toEqual([]);
  });

  /** Sums a workflow's runs from their journals as stored. */
  async function expected(workflow: string): Promise<Expected> {
    const runs = (await engine.listRuns({ workflow, limit: 100 })).runs;
    const sum: Expected = { runs: runs.length, costMicros: 0, inputTokens: 0, outputTokens: 0, journalBytes: 0, journalEntries: 0 };
    for (const run of runs) {
      for (const entry of await engine.store.readJournal(run.runId, { afterSeq: 0, limit: 10_000 })) {
        sum.journalBytes += Buffer.byteLength(entry.payload);
        sum.journalEntries += 1;
      }
      for (const entry of await engine.journal(run.runId)) {
        if (entry.kind !== "step.completed" || !/\/model#\d+$/.test(entry.opKey ?? "")) continue;
        const result = (entry.data as { result: { costMicros?: number; usage: { inputTokens: number; outputTokens: number } } }).result;
        sum.costMicros += result.costMicros ?? 0;
        sum.inputTokens += result.usage.inputTokens;
        sum.outputTokens += result.usage.outputTokens;
      }
    }
    return sum;
  }

  const cell = (p: Page, workflow: string, key: string) => p.locator(`tr[data-workflow="${workflow}"] [data-cost="${key}"]`);

  it("lists each workflow's figures as the store holds them, sub-cent spend included", async () => {
    const p = await open("/ui/costs");
    await p.locator("table[data-costs-table]").waitFor({ timeout: 10_000 });
    expect(await p.locator("[data-costs-runs]").textContent()).toBe("4 runs created in the last 24 hours");

    const r = await expected("researcher");
    expect(r.runs).toBe(2);
    expect(r.costMicros).toBeGreaterThan(0);
    expect(r.costMicros).toBeLessThan(10_000); // under a cent: the page must not round it to $0.00
    expect(await cell(p, "researcher", "runs").textContent()).toBe("2");
    expect(await cell(p, "researcher", "spend").textContent()).toBe(`$${Number((r.costMicros / 1e6).toPrecision(3))}`);
    expect(await cell(p, "researcher", "tokens").textContent()).toBe(`${r.inputTokens.toLocaleString("en-US")} · ${r.outputTokens.toLocaleString("en-US")}`);
    expect(await cell(p, "researcher", "journal").getAttribute("title")).toBe(`${r.journalBytes.toLocaleString("en-US")} bytes`);
    expect(r.journalBytes).toBeGreaterThan(4000); // the 2,000-character URL, journaled as intent and result, in each run
    expect(await cell(p, "researcher", "journal").textContent()).toBe(`${(r.journalBytes / 1024).toFixed(1)} KiB${r.journalEntries} entries`);
    const tools = await cell(p, "researcher", "tools")
      .locator("li")
      .evaluateAll((items) => items.map((li) => `${li.getAttribute("data-tool")} ${li.querySelector("[data-count]")?.textContent}`));
    expect(tools).toEqual(["lookup ×4", "fetch_page ×2"]); // most called first
    expect(await cell(p, "researcher", "worker").textContent()).toMatch(/^\d+(\.\d)? (ms|s)$/);
    expect(await cell(p, "researcher", "human").textContent()).toBe("—");

    const q = await expected("review");
    expect(await cell(p, "review", "runs").textContent()).toBe("1");
    expect(await cell(p, "review", "spend").textContent()).toBe("$0");
    expect(await cell(p, "review", "journal").getAttribute("title")).toBe(`${q.journalBytes.toLocaleString("en-US")} bytes`);
    // People's time as the journal records it: from the question's entry to the answer's.
    const reviewJournal = await engine.journal("q1");
    const at = (kind: string) => reviewJournal.find((entry) => entry.kind === kind)!.at.getTime();
    const waited = at("human.answered") - at("human.requested");
    expect(waited).toBeGreaterThanOrEqual(1200);
    expect(await cell(p, "review", "human").textContent()).toBe(`${(waited / 1000).toFixed(1)} s1 question`);

    // The hostile name is text: no element made from it, no script run; its row links to its runs.
    expect(await p.locator("tbody th[scope=row]").allTextContents()).toContain(HOSTILE);
    expect(await p.locator("table[data-costs-table] img").count()).toBe(0);
    expect(await p.evaluate("window.__costsXss")).toBeUndefined();
    expect(await p.getByRole("link", { name: HOSTILE }).getAttribute("href")).toBe(`/ui/runs?workflow=${encodeURIComponent(HOSTILE)}`);
  });

  it("changes the range by keyboard, keeps it in the URL, and says when a range holds no run", async () => {
    const p = await open("/ui/costs");
    await p.locator("table[data-costs-table]").waitFor({ timeout: 10_000 });
    const sevenDays = p.getByRole("button", { name: "7 days" });
    await sevenDays.focus();
    await p.keyboard.press("Enter");
    await expect.poll(() => p.evaluate("location.search")).toBe("?range=7d");
    expect(await sevenDays.getAttribute("aria-pressed")).toBe("true");
    await p.locator("[data-costs-runs]").filter({ hasText: "4 runs created in the last 7 days" }).waitFor({ timeout: 5000 });
    await p.keyboard.press("Tab");
    await p.keyboard.press("Space");
    await expect.poll(() => p.evaluate("location.search")).toBe("?range=30d");

    // A range that ends before any run was created: the server answers no workflow.
    await p.route(
      (url) => url.pathname === "/costs",
      (route) => route.fulfill({ json: { since: new Date(0).toISOString(), until: new Date(0).toISOString(), runs: 0, truncated: false, workflows: [] } }),
    );
    await p.getByRole("button", { name: "1 hour" }).click();
    await p.getByText("No run was created in this range.").waitFor({ timeout: 5000 });

    // The nav leads here and marks the page.
    await p.goto(`${server.url}/ui/`);
    await p.getByRole("link", { name: "Costs", exact: true }).click();
    await expect.poll(() => p.evaluate<string | null>('document.activeElement.tagName === "H1" ? document.activeElement.textContent : null')).toBe("Costs");
    expect(await p.getByRole("link", { name: "Costs", exact: true }).getAttribute("aria-current")).toBe("page");
  });

  it("accessibility and narrow screens: no serious or critical axe violation; at 800 px the page does not scroll sideways", async () => {
    for (const width of [1366, 800]) {
      const p = await open("/ui/costs", width, true);
      await p.locator("table[data-costs-table]").waitFor({ timeout: 10_000 });
      await p.screenshot({ path: join(ARTIFACTS, `costs-${width}x900.png`), fullPage: true });
      expect(await p.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")).toBe(true);
      await p.addScriptTag({ content: AXE_SOURCE });
      const result = await p.evaluate<{ violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }>("axe.run(document)");
      const violations = result.violations
        .filter((v) => v.impact === "serious" || v.impact === "critical")
        .map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
      expect(violations, `at ${width} px`).toEqual([]);
      await tabs.close();
    }
  }, 60_000);
});
