// The dashboard in a real browser (Debian's Chromium, driven by playwright-core) against a real
// server on a SQLite file: runs list, live journal over the stream, answering a person's question,
// URL routing across reloads. Screenshots go to test-artifacts/dashboard/.
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createEngine } from "../src/engine/create-engine.js";
import type { Engine } from "../src/engine/engine.js";
import { silentLogger } from "../src/engine/logger.js";
import { builtDashboardDir } from "../src/server/dashboard.js";
import { serve, type RunningServer } from "../src/server/serve.js";
import { waitFor } from "../src/testing/wait-for.js";
import { CairnClient } from "../src/client/client.js";
import { TEST_WORKFLOWS, flakyState } from "./support/server.js";

const CHROMIUM = process.env.CAIRN_CHROMIUM ?? "/usr/bin/chromium";
const ARTIFACTS = join(import.meta.dirname, "..", "test-artifacts", "dashboard");
const haveChromium = existsSync(CHROMIUM);

if (!haveChromium && process.env.CI === "true") {
  // In CI a missing browser is a broken environment, not a reason to skip: .ci/run installs it.
  describe("dashboard in a browser", () => {
    it("needs Chromium", () => {
      throw new Error(
        `Chromium is not at ${CHROMIUM} (set CAIRN_CHROMIUM, or apt-get install -y chromium); the browser tests cannot run under CI=true without it.`,
      );
    });
  });
} else {
  if (!haveChromium) console.warn(`dashboard browser tests skipped: no Chromium at ${CHROMIUM} (apt-get install -y chromium, or set CAIRN_CHROMIUM)`);
  describe.skipIf(!haveChromium)("dashboard in a browser", () => {
    let dir: string;
    let engine: Engine;
    let server: RunningServer;
    let browser: Browser;
    let page: Page;
    let api: CairnClient;

    beforeAll(async () => {
      const dashboardDir = builtDashboardDir();
      if (!dashboardDir) throw new Error("The dashboard is not built: run `npm run build` (npm test does) so dist/dashboard/ exists.");
      dir = mkdtempSync(join(tmpdir(), "cairn-dashboard-"));
      mkdirSync(ARTIFACTS, { recursive: true });
      engine = await createEngine({ store: `sqlite:${join(dir, "cairn.db")}`, workflows: TEST_WORKFLOWS, logger: silentLogger });
      engine.startWorker({ pollInterval: 10 });
      server = await serve(engine, { host: "127.0.0.1", port: 0, streamPollMs: 20, dashboardDir });
      api = new CairnClient({ baseUrl: server.url });
      browser = await chromium.launch({
        executablePath: CHROMIUM,
        args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
      });
    });

    afterAll(async () => {
      await browser?.close();
      await server?.close();
      await engine?.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    let pageErrors: string[] = [];
    afterEach(async (context) => {
      if (page) {
        await page
          .screenshot({ path: join(ARTIFACTS, `${context.task.name.replace(/[^a-z0-9]+/gi, "-").slice(0, 80)}.png`), fullPage: true })
          .catch(() => undefined);
        await page.close();
      }
      expect(pageErrors, "errors thrown in the page").toEqual([]);
    });

    async function open(path: string): Promise<Page> {
      page = await browser.newPage({ viewport: { width: 1360, height: 900 } });
      pageErrors = [];
      page.on("pageerror", (error) => pageErrors.push(error.message));
      await page.goto(`${server.url}${path}`);
      return page;
    }

    const status = async (runId: string, wanted: string) => waitFor(async () => (await engine.getRun(runId)).status === wanted, { what: `${runId} ${wanted}` });

    it("lists runs with their status, filters them, and keeps the filter in the URL across a reload", async () => {
      await engine.start("paced", { steps: 1 }, { runId: "list-waiting" });
      await engine.start("flaky", {}, { runId: "list-failed" });
      await status("list-waiting", "suspended");
      await status("list-failed", "failed");

      const page = await open("/ui/runs");
      const waitingRow = page.locator('tr[data-run-id="list-waiting"]');
      const failedRow = page.locator('tr[data-run-id="list-failed"]');
      await expect.poll(() => waitingRow.locator("[data-status]").getAttribute("data-status")).toBe("suspended");
      await expect.poll(() => failedRow.locator("[data-status]").getAttribute("data-status")).toBe("failed");
      expect(await waitingRow.textContent()).toContain("event “go”");
      expect(await failedRow.textContent()).toContain("not yet");

      await page.getByRole("button", { name: "failed", exact: true }).click();
      await expect.poll(() => page.url()).toMatch(/\/ui\/runs\?status=failed$/);
      await expect.poll(() => waitingRow.count()).toBe(0);
      await page.reload();
      await expect.poll(() => failedRow.count()).toBe(1);
      expect(await waitingRow.count()).toBe(0);
      expect(await page.getByRole("button", { name: "failed", exact: true }).getAttribute("aria-pressed")).toBe("true");

      // The failed run's timeline shows its error with the stack trace behind a click.
      await page.goto(`${server.url}/ui/runs/list-failed`);
      const error = page.locator("details.err").first();
      await expect.poll(() => error.count(), { timeout: 10_000 }).toBeGreaterThan(0);
      expect(await error.locator("summary").textContent()).toContain("not yet");
      expect(await error.locator("pre").isVisible()).toBe(false);
      await error.locator("summary").click();
      await expect.poll(() => error.locator("pre").isVisible()).toBe(true);
      // The user's frames first (the engine's folded behind a toggle): the step's own error shows the throw in test/support/server.ts.
      const stepError = page.locator('li[data-kind="step.failed"] details.err').first();
      await stepError.locator("summary").click();
      expect(await stepError.locator("[data-user-frames]").textContent()).toMatch(/^at .*server\.ts/);

      // Status is live: a run that changes state changes in the list without a reload.
      await page.goto(`${server.url}/ui/runs`);
      flakyState.healed = true;
      await engine.retry("list-failed");
      await expect.poll(() => failedRow.locator("[data-status]").getAttribute("data-status"), { timeout: 10_000 }).toBe("completed");
    });

    it("shows a run's journal and appends new entries live, without a reload", async () => {
      await engine.start("paced", { steps: 2 }, { runId: "live-1" });
      await status("live-1", "suspended");

      const page = await open("/ui/runs/live-1");
      await page.evaluate(() => ((globalThis as unknown as { marker: number }).marker = 42));
      await expect.poll(() => page.locator('[data-kind="event.waiting"]').count()).toBe(1);
      expect(await page.locator('[data-kind="run.created"]').count()).toBe(1);
      expect(await page.locator('[data-kind="step.completed"]').first().textContent()).toContain("0");
      expect(await page.locator(".waiting").textContent()).toContain("event “go”");

      await engine.sendEvent("live-1", "go", { n: 1 }, { eventId: "go-1" });
      await expect.poll(() => page.locator('[data-kind="event.received"]').count()).toBe(1);
      await expect.poll(() => page.locator('[data-kind="event.waiting"]').count()).toBe(2);

      // The second event from the page itself: the send form prefilled with what the run waits for.
      await page.getByLabel("event payload").fill('{"from":"dashboard"}');
      await page.getByRole("button", { name: "Send" }).click();
      await expect.poll(() => page.locator('[data-kind="run.completed"]').count()).toBe(1);
      await expect.poll(() => page.locator("header [data-status]").getAttribute("data-status")).toBe("completed");
      expect(await page.locator('[data-kind="event.received"]').last().textContent()).toContain("dashboard");

      // Every entry once, in seq order; and no reload happened.
      const seqs = await page.locator("[data-seq]").evaluateAll((items) => items.map((item) => Number(item.getAttribute("data-seq"))));
      const run = await engine.getRun("live-1");
      expect(seqs).toEqual(Array.from({ length: run.entries }, (_, i) => i + 1));
      expect(await page.evaluate(() => (globalThis as unknown as { marker?: number }).marker)).toBe(42);
    });

    it("shows a large journal value elided, with a button that loads it whole", async () => {
      const big = `${"x".repeat(20_000)}-THE-END`;
      await engine.start("paced", { steps: 1, big } as never, { runId: "elided-1" });
      await status("elided-1", "suspended");
      const page = await open("/ui/runs/elided-1");
      const created = page.locator('[data-kind="run.created"]');
      await expect.poll(() => created.count()).toBe(1);
      // The stream sent a preview: the row says how large the value is, not the value.
      expect(Number(await created.locator("[data-elided]").getAttribute("data-elided"))).toBeGreaterThan(20_000);
      expect(await created.textContent()).not.toContain("THE-END");
      await created.getByRole("button", { name: "Load whole value" }).click();
      await expect.poll(() => created.locator("[data-elided]").count()).toBe(0);
      expect(await created.textContent()).toContain("paced v1");
      // Whole, it opens into the JSON viewer, which bounds a long string until asked for all of it.
      await created.locator("details.json summary").first().click();
      expect(await created.locator("[data-json-tree]").textContent()).not.toContain("-THE-END");
      await created.getByRole("button", { name: "show all 20,008 characters" }).click();
      expect(await created.locator("[data-json-tree]").textContent()).toContain("-THE-END");
      // Small entries came whole, with no button.
      expect(await page.locator('[data-kind="event.waiting"] button').count()).toBe(0);
    });

    it("answers a pending human request from the inbox and the run completes", async () => {
      await engine.start("ask", {}, { runId: "ask-1" });
      await status("ask-1", "suspended");

      const page = await open("/ui/human-requests");
      const card = page.locator('[data-request-id="ask-1:review#0"]');
      await expect.poll(() => card.count()).toBe(1);
      expect(await card.textContent()).toContain("Ship it?");
      await card.getByLabel("your name").fill("ada");
      await card.getByRole("button", { name: "approve" }).click();

      await status("ask-1", "completed");
      expect((await engine.getRun("ask-1")).output).toBe("approve");
      await expect.poll(() => card.count()).toBe(0);
      const [request] = await api.listHumanRequests({ runId: "ask-1" });
      expect(request?.answer).toMatchObject({ action: "answer", option: "approve", by: "ada" });

      // The run page tells the story: the question, the answer and who gave it.
      await page.locator('a[href="/ui/runs/ask-1"]').first().click();
      await expect.poll(() => page.locator('[data-kind="human.answered"]').count()).toBe(1);
      expect(await page.locator('[data-kind="human.answered"]').textContent()).toContain("approve by ada");
    });

    it("starts a run from the dashboard, answers its question in the inbox, and shows the finished timeline", async () => {
      const page = await open("/ui/runs");
      await page.getByText("Start a run", { exact: true }).first().click();
      const form = page.locator('form[aria-label="start a run"]');
      await expect.poll(() => form.locator("option").allTextContents()).toContain("ask@1");
      await form.getByLabel("workflow").selectOption("ask@1");
      await form.getByLabel("run id").fill("from-ui-1");
      // Input is validated before it is sent.
      await form.getByLabel("run input").fill("{not json");
      expect(await form.textContent()).toContain("Input is not JSON");
      expect(await form.getByRole("button", { name: "Start" }).isDisabled()).toBe(true);
      await form.getByLabel("run input").fill('{"from":"dashboard"}');
      await page.screenshot({ path: join(ARTIFACTS, "flow-1-start-form.png"), fullPage: true });
      await form.getByRole("button", { name: "Start" }).click();

      await expect.poll(() => page.url()).toBe(`${server.url}/ui/runs/from-ui-1`);
      await status("from-ui-1", "suspended");
      expect((await engine.getRun("from-ui-1")).input).toEqual({ from: "dashboard" });
      await expect.poll(() => page.locator('[data-kind="human.requested"]').count()).toBe(1);
      await expect.poll(() => page.locator(".waiting").textContent()).toContain("a person");
      await page.screenshot({ path: join(ARTIFACTS, "flow-2-waiting-for-a-person.png"), fullPage: true });

      await page.getByRole("link", { name: "Human requests", exact: true }).click();
      const card = page.locator('[data-request-id="from-ui-1:review#0"]');
      await expect.poll(() => card.count()).toBe(1);
      await page.screenshot({ path: join(ARTIFACTS, "flow-3-inbox.png"), fullPage: true });
      await card.getByLabel("your name").fill("grace");
      await card.getByRole("button", { name: "approve" }).click();
      await status("from-ui-1", "completed");
      await expect.poll(() => card.count()).toBe(0);

      await page.locator('a[href="/ui/runs/from-ui-1"]').first().click();
      await expect.poll(() => page.locator("header [data-status]").getAttribute("data-status")).toBe("completed");
      await expect.poll(() => page.locator('[data-kind="run.completed"]').count()).toBe(1);
      expect(await page.locator('[data-kind="human.answered"]').textContent()).toContain("approve by grace");
      await page.screenshot({ path: join(ARTIFACTS, "flow-4-timeline.png"), fullPage: true });
    });

    it("says the overview failed to load in each panel, instead of an empty state or a placeholder that never ends", async () => {
      page = await browser.newPage({ viewport: { width: 1366, height: 900 } });
      pageErrors = [];
      page.on("pageerror", (error) => pageErrors.push(error.message));
      // The overview is one request (GET /overview): the server answers it with an error.
      await page.route(
        (url: URL) => url.pathname === "/overview",
        (route) =>
          route.fulfill({
            status: 503,
            contentType: "application/json",
            body: JSON.stringify({ error: { code: "STORE_UNAVAILABLE", message: "the store is down" } }),
          }),
      );
      await page.goto(`${server.url}/ui/`);
      const panel = (name: string) => page.locator(".panel", { has: page.getByRole("heading", { name, exact: true }) });
      for (const name of ["Failure patterns", "Top failing steps", "Human input", "Spend"])
        await expect.poll(() => panel(name).locator("[data-load-error]").allTextContents(), { message: name }).toEqual(["Could not load: the store is down"]);
      expect(await panel("Failure patterns").textContent()).not.toContain("No failed runs.");
      expect(await panel("Human input").textContent()).not.toContain("No answers yet.");
      const workersTile = page.locator('a.tile[href="/ui/workers"] .tile-value');
      await expect.poll(() => workersTile.textContent()).toBe("?");
      expect(await workersTile.locator("span").getAttribute("title")).toBe("the store is down");
    });

    it("keeps the view on reload: deep links to a run, the inbox and the workers page", async () => {
      await engine.start("paced", { steps: 1 }, { runId: "deep/link:1" });
      await status("deep/link:1", "suspended");

      const page = await open("/ui/");
      await page.getByRole("link", { name: "Runs", exact: true }).click();
      await page.locator('a[href="/ui/runs/deep%2Flink%3A1"]').click();
      await expect.poll(() => page.url()).toBe(`${server.url}/ui/runs/deep%2Flink%3A1`);
      await expect.poll(() => page.locator("h1").textContent()).toBe("deep/link:1");
      await page.reload();
      await expect.poll(() => page.locator("h1").textContent()).toBe("deep/link:1");
      await expect.poll(() => page.locator('[data-kind="event.waiting"]').count()).toBe(1);

      await page.goBack();
      await expect.poll(() => page.url()).toBe(`${server.url}/ui/runs`);
      await page.goto(`${server.url}/ui/workers`);
      await expect.poll(() => page.locator("tbody tr").count()).toBeGreaterThan(0);
      await page.reload();
      expect(await page.locator("h1").textContent()).toBe("Workers");
      await page.goto(`${server.url}/ui/`);
      await expect.poll(() => page.locator(".tile").first().textContent()).toMatch(/\d/);
    });
  });
}
