// The dashboard at volume, in a real browser (Debian's Chromium via playwright-core) against one
// real server on a SQLite file holding 5,000 runs in every state (written through the store) and a
// run with a 5,000-entry journal: overview figures from the store, one request per refresh, dotted
// run ids on reload, narrow screens, long journals, an unknown run. Screenshots at 1366×900 and
// 800×900 go to test-artifacts/dashboard-volume/.
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newEntry, type NewEntry } from "../src/core/journal.js";
import { createEngine } from "../src/engine/create-engine.js";
import type { Engine } from "../src/engine/engine.js";
import { silentLogger } from "../src/engine/logger.js";
import { builtDashboardDir } from "../src/server/dashboard.js";
import { serve, type RunningServer } from "../src/server/serve.js";
import { waitFor } from "../src/testing/wait-for.js";
import { seedBulkRuns, type BulkFigures } from "./support/bulk-runs.js";
import { TEST_WORKFLOWS } from "./support/server.js";

const CHROMIUM = process.env.CAIRN_CHROMIUM ?? "/usr/bin/chromium";
const ARTIFACTS = join(import.meta.dirname, "..", "test-artifacts", "dashboard-volume");
const haveChromium = existsSync(CHROMIUM);
const WIDE = { width: 1366, height: 900 };
const NARROW = { width: 800, height: 900 };

describe.skipIf(!haveChromium && process.env.CI !== "true")("dashboard at volume in a browser", () => {
  let dir: string;
  let engine: Engine;
  let server: RunningServer;
  let browser: Browser;
  let figures: BulkFigures;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    if (!haveChromium) throw new Error(`Chromium is not at ${CHROMIUM} (set CAIRN_CHROMIUM, or apt-get install -y chromium).`);
    const dashboardDir = builtDashboardDir();
    if (!dashboardDir) throw new Error("The dashboard is not built: run `npm run build` so dist/dashboard/ exists.");
    dir = mkdtempSync(join(tmpdir(), "cairn-dashboard-volume-"));
    mkdirSync(ARTIFACTS, { recursive: true });
    engine = await createEngine({ store: `sqlite:${join(dir, "cairn.db")}`, workflows: TEST_WORKFLOWS, logger: silentLogger });
    figures = await seedBulkRuns(engine.store, 5000);
    await seedLongRun(engine, "long-1", 5000);
    engine.startWorker({ pollInterval: 10 });
    server = await serve(engine, { host: "127.0.0.1", port: 0, streamPollMs: 20, dashboardDir });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"] });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await engine?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
    expect(pageErrors, "errors thrown in the pages").toEqual([]);
  });

  async function open(path: string, viewport = WIDE): Promise<Page> {
    const page = await browser.newPage({ viewport });
    page.on("pageerror", (error) => pageErrors.push(error.message));
    await page.goto(`${server.url}${path}`);
    return page;
  }
  const shot = (page: Page, name: string) => page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: false });
  const sideways = (page: Page) => page.evaluate<number>("document.documentElement.scrollWidth - document.documentElement.clientWidth");

  it("shows the store's counts over all 5,000 runs, failures grouped by pattern and sub-cent spend, from one request per refresh", async () => {
    const page = await browser.newPage({ viewport: WIDE });
    page.on("pageerror", (error) => pageErrors.push(error.message));
    const apiCalls: string[] = [];
    page.on("request", (request) => {
      const url = new URL(request.url());
      if (!url.pathname.startsWith("/ui")) apiCalls.push(url.pathname);
    });
    await page.goto(`${server.url}/ui/`);
    for (const status of ["suspended", "cancelled", "failed", "completed", "pending"])
      await expect.poll(() => page.locator(`[data-count="${status}"]`).textContent(), { message: status }).toBe(String(figures.byStatus[status]));
    const patterns = page.locator("[data-pattern]");
    await expect.poll(() => patterns.count()).toBe(1);
    expect(await patterns.first().textContent()).toContain(`${figures.recentFailures}×`);
    expect(await patterns.first().getAttribute("data-pattern")).toBe("Error: quota exceeded for tenant <id>: <n> calls");
    const spend = page.locator("[data-spend-total]");
    await expect.poll(() => spend.getAttribute("data-spend-total")).toBe(String(figures.recentCostMicros));
    expect(await spend.textContent()).toContain(`${figures.recentCalls} model calls`);
    // The parent's spend includes its child's, in sub-cent dollars ($0.00091, not $0.00).
    expect(await page.locator('[data-panel="spend"] li').first().textContent()).toContain("$0.00091");
    await shot(page, "overview-1366");
    expect(apiCalls).toEqual(["/overview"]);

    // All time: every failure, the same status counts.
    await page.getByRole("button", { name: "all time" }).click();
    await expect.poll(() => patterns.first().textContent()).toContain(`${figures.byStatus.failed}×`);
    expect(apiCalls).toEqual(["/overview", "/overview"]);
    await page.setViewportSize(NARROW);
    expect(await sideways(page)).toBeLessThanOrEqual(0);
    await shot(page, "overview-800");
    await page.close();
  });

  it("loads a run whose id has dots straight from its URL, and on reload", async () => {
    await engine.start("paced", { steps: 1 }, { runId: "release-v2.3.0" });
    await engine.start("paced", { steps: 1 }, { runId: "nightly:2026-11-26T03:00:00.000Z" });
    await waitFor(async () => (await engine.getRun("release-v2.3.0")).status === "suspended", { what: "release run suspended" });
    for (const runId of ["release-v2.3.0", "nightly:2026-11-26T03:00:00.000Z"]) {
      const page = await open(`/ui/runs/${encodeURIComponent(runId)}`);
      await expect.poll(() => page.locator("h1").textContent(), { timeout: 15_000 }).toBe(runId);
      await page.reload();
      await expect.poll(() => page.locator("h1").textContent(), { timeout: 15_000 }).toBe(runId);
      await page.close();
    }
  });

  it("keeps run pages readable at 800 px: the journal has room and nothing scrolls sideways", async () => {
    await engine.start("flaky", {}, { runId: "narrow-failed" });
    await waitFor(async () => (await engine.getRun("narrow-failed")).status === "failed", { what: "narrow-failed failed" });
    const page = await open("/ui/runs", NARROW);
    await expect.poll(() => page.locator("tr[data-run-id]").count(), { timeout: 15_000 }).toBeGreaterThan(10);
    expect(await sideways(page)).toBeLessThanOrEqual(0);
    await shot(page, "runs-800");

    await page.goto(`${server.url}/ui/runs/narrow-failed`);
    const what = page.locator('[data-kind="run.failed"] .what');
    await expect.poll(() => what.count(), { timeout: 15_000 }).toBe(1);
    // The entry's detail gets the row's width, not a 36 px column with one character per line.
    expect((await what.boundingBox())!.width).toBeGreaterThan(400);
    expect(await sideways(page)).toBeLessThanOrEqual(0);
    await shot(page, "run-800");
    await page.setViewportSize(WIDE);
    await shot(page, "run-1366");
    await page.close();
  });

  it("draws a 5,000-entry journal in a window, filters it by kind and collapses it to one row per op", async () => {
    const page = await open("/ui/runs/long-1");
    const count = page.locator("[data-journal-count]");
    await expect.poll(() => count.textContent(), { timeout: 30_000 }).toBe("5000 entries");
    // Only the rows in view are in the DOM.
    expect(await page.locator("[data-seq]").count()).toBeLessThan(150);
    expect(await page.evaluate<number>("document.querySelectorAll('*').length")).toBeLessThan(3000);
    // Scrolled to the end, the last entry is there.
    await page.locator('ol[aria-label="journal"]').evaluate((ol) => (ol.scrollTop = ol.scrollHeight));
    await expect.poll(() => page.locator('[data-seq="5000"]').count()).toBe(1);
    await shot(page, "long-journal-1366");

    await page.getByLabel("entry kind").selectOption("step.failed");
    await expect.poll(() => count.textContent()).toBe("250 of 5000 entries");
    expect(await page.locator('[data-kind="step.failed"]').count()).toBe(250);
    expect(await page.locator('[data-kind="step.completed"]').count()).toBe(0);
    await page.getByLabel("entry kind").selectOption("");

    await page.getByRole("button", { name: "One row per op" }).click();
    await expect.poll(() => count.textContent()).toBe("2249 ops");
    const row = page.locator('[data-op-row="work#0"]');
    expect(await row.textContent()).toMatch(/2 attempts · completed · \d+ ms/);
    expect(await page.locator("[data-op-row]").count()).toBeLessThan(150);
    await page.setViewportSize(NARROW);
    await shot(page, "long-journal-by-op-800");
    await page.close();
  });

  it("says once that an unknown run does not exist", async () => {
    const page = await browser.newPage({ viewport: WIDE });
    page.on("pageerror", (error) => pageErrors.push(error.message));
    let answers = 0;
    page.on("response", (response) => {
      if (new URL(response.url()).pathname.startsWith("/runs/no-such-run")) answers++;
    });
    await page.goto(`${server.url}/ui/runs/no-such-run`);
    await expect.poll(() => page.locator("h1").textContent(), { timeout: 15_000 }).toBe("Run not found");
    // After the page polled the run again (every 2 s), still one message and nothing else.
    await expect.poll(() => answers, { timeout: 10_000 }).toBeGreaterThanOrEqual(3);
    expect(await page.locator(".error-box").count()).toBe(0);
    expect(await page.getByText("reconnecting").count()).toBe(0);
    expect(await page.getByText("Run not found").count()).toBe(1);
    await page.close();
  });
});

/**
 * A run with a journal of `total` entries, committed through the store: ops `work#0`… each a
 * started and a completed step; every ninth op has a failed attempt first (2 attempts).
 */
async function seedLongRun(engine: Engine, runId: string, total: number): Promise<void> {
  const store = engine.store;
  await store.createRun({ runId, workflow: "long", version: "1", input: "{}" }, Date.now() - 60_000);
  const [run] = await store.claimRuns({ workerId: "seed", now: Date.now(), leaseMs: 3_600_000, limit: 1, workflows: [{ name: "long", version: "1" }] });
  const entries: NewEntry[] = [];
  for (let op = 0; entries.length < total - 2; op++) {
    const key = `work#${op}`;
    if (op % 9 === 0) {
      entries.push(newEntry("step.started", key, { attempt: 1 }));
      entries.push(newEntry("step.failed", key, { attempt: 1, error: { name: "Error", message: `timeout ${op}` }, final: false, retryAt: Date.now() }));
    }
    entries.push(newEntry("step.started", key, { attempt: op % 9 === 0 ? 2 : 1 }));
    entries.push(newEntry("step.completed", key, { result: { op }, attempt: op % 9 === 0 ? 2 : 1 }));
  }
  entries.length = total - 2;
  for (let start = 0; start < entries.length; start += 1000) {
    const [result] = await store.commit([{ runId, epoch: run!.leaseEpoch, entries: entries.slice(start, start + 1000) }], Date.now());
    expect(result?.ok).toBe(true);
  }
}
