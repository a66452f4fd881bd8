// Alerts on the overview, in a real browser (Debian's Chromium via playwright-core) against a real
// server on a SQLite file: a run over a spend rule fires one alert, which the overview's Alerts panel
// lists (from its one request) with its rule, summary and delivery status, its text escaped; axe finds no serious or
// critical violation. Screenshots go to test-artifacts/alerts/.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseAlertRules } from "../src/core/alert-schemas.js";
import { createEngine } from "../src/engine/create-engine.js";
import { defineWorkflow } from "../src/engine/define-workflow.js";
import type { Engine } from "../src/engine/engine.js";
import { silentLogger } from "../src/engine/logger.js";
import { writeAlertRules } from "../src/server/alerts/alert-rules.js";
import { evaluateAlerts } from "../src/server/alerts/evaluator.js";
import { builtDashboardDir } from "../src/server/dashboard.js";
import { serve, type RunningServer } from "../src/server/serve.js";

const CHROMIUM = process.env.CAIRN_CHROMIUM ?? "/usr/bin/chromium";
const ARTIFACTS = join(import.meta.dirname, "..", "test-artifacts", "alerts");
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
const HOSTILE = `<img src=x onerror="window.__pwned=1">`;

/** One model step that costs $7.50, as an agent's model step journals it. */
const spender = defineWorkflow({
  name: "spender",
  version: "1",
  async run(ctx) {
    await ctx.step("model", () => ({ usage: { inputTokens: 1000, outputTokens: 500 }, costMicros: 7_500_000 }));
    return "spent";
  },
});

const haveChromium = existsSync(CHROMIUM);

describe.skipIf(!haveChromium && process.env.CI !== "true")("alerts on the overview, in a browser", () => {
  let dir: string;
  let engine: Engine;
  let server: RunningServer;
  let browser: Browser;

  beforeAll(async () => {
    if (!haveChromium) throw new Error(`Chromium is not at ${CHROMIUM} (set CAIRN_CHROMIUM, or apt-get install -y chromium).`);
    const dashboardDir = builtDashboardDir();
    if (!dashboardDir) throw new Error("The dashboard is not built: run `npm run build` so dist/dashboard/ exists.");
    dir = mkdtempSync(join(tmpdir(), "cairn-alerts-"));
    mkdirSync(ARTIFACTS, { recursive: true });
    engine = await createEngine({ store: `sqlite:${join(dir, "cairn.db")}`, workflows: [spender], logger: silentLogger });
    const worker = engine.startWorker({ pollInterval: 10 });
    await (await engine.start(spender, undefined, { runId: "big-spender" })).result();
    await worker.stop();
    const rules = parseAlertRules(
      {
        rules: [
          { name: "costly-run", kind: "spendPerRun", threshold: 5, description: `page the on-call ${HOSTILE}` },
          { name: "quiet", kind: "spendPerDay", threshold: 100 },
        ],
      },
      "test",
    );
    await writeAlertRules(engine.store, rules, "test", Date.now());
    expect((await evaluateAlerts(engine.store, { now: Date.now(), evaluatorId: "e2e" })).fired).toHaveLength(1);
    server = await serve(engine, { host: "127.0.0.1", port: 0, dashboardDir });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"] });
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await engine?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("the overview lists the fired alert, escaped, with no serious or critical axe violation", async () => {
    for (const width of [1366, 800]) {
      const page = await browser.newPage({ viewport: { width, height: 900 }, bypassCSP: true });
      const errors: string[] = [];
      page.on("pageerror", (error) => errors.push(error.message));
      const apiCalls: string[] = [];
      page.on("request", (request) => {
        const url = new URL(request.url());
        if (!url.pathname.startsWith("/ui")) apiCalls.push(url.pathname);
      });
      await page.goto(`${server.url}/ui/`);
      const row = page.locator('[data-panel="alerts"] tr[data-alert="costly-run/run/big-spender"]');
      await row.waitFor({ timeout: 10_000 });
      expect(await page.locator('[data-panel="alerts"] tbody tr').count()).toBe(1);
      const text = await row.textContent();
      expect(text).toContain("costly-run");
      expect(text).toContain("spendPerRun");
      expect(text).toContain("Run big-spender (spender) spent $7.50 on models");
      expect(text).toContain("pending");
      // The rule's description is shown as text: no element was made of it, no script ran.
      expect(text).toContain(HOSTILE);
      expect(await page.locator('[data-panel="alerts"] img').count()).toBe(0);
      expect(await page.evaluate("window.__pwned")).toBeUndefined();
      expect(await row.getByRole("link", { name: "big-spender" }).getAttribute("href")).toBe("/ui/runs/big-spender");
      // The alerts come with the overview's one request per refresh.
      expect(apiCalls).toEqual(["/overview"]);
      await page.screenshot({ path: join(ARTIFACTS, `overview-${width}x900.png`), fullPage: true });
      if (width === 1366) {
        await page.addScriptTag({ content: AXE_SOURCE });
        const result = await page.evaluate<{ violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }>("axe.run(document)");
        const serious = result.violations
          .filter((v) => v.impact === "serious" || v.impact === "critical")
          .map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
        expect(serious).toEqual([]);
      }
      expect(errors).toEqual([]);
      await page.close();
    }
  }, 60_000);

  it("the alert run is a system run: the overview's total and the runs page count the user's one run; a workflow filter lists it", async () => {
    const page = await browser.newPage({ viewport: { width: 1366, height: 900 } });
    await page.goto(`${server.url}/ui/`);
    const total = page.getByText(/^\d+ runs? in all$/);
    await total.waitFor({ timeout: 10_000 });
    expect(await total.textContent()).toMatch(/^1 runs? in all$/);
    await page.goto(`${server.url}/ui/runs`);
    await page.locator("tr[data-run-id]").first().waitFor({ timeout: 10_000 });
    await page.locator("[data-run-total]", { hasText: "1 run" }).waitFor({ timeout: 10_000 });
    expect(await page.locator("tr[data-run-id]").evaluateAll((rows) => rows.map((row) => row.getAttribute("data-run-id")))).toEqual(["big-spender"]);
    await page.goto(`${server.url}/ui/runs?workflow=cairn.alert`);
    await page.locator('tr[data-run-id="cairn.alert/costly-run/run/big-spender"]').waitFor({ timeout: 10_000 });
    expect(await page.locator("tr[data-run-id]").count()).toBe(1);
    await page.close();
  }, 60_000);
});
