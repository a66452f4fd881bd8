// The dashboard in a real browser against a real server with token auth (SQLite file, tokens in
// its store): the page asks for a token instead of showing the API's 401, a wrong token and one
// without the read scope are refused with the server's reason, a right one shows the runs and is
// kept in the tab (never in the URL), "Forget token" and a revoked token bring the panel back.
// Screenshots go to test-artifacts/dashboard/.
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEngine } from "../src/engine/create-engine.js";
import type { Engine } from "../src/engine/engine.js";
import { silentLogger } from "../src/engine/logger.js";
import { issueToken } from "../src/server/auth/tokens.js";
import { builtDashboardDir } from "../src/server/dashboard.js";
import { serve, type RunningServer } from "../src/server/serve.js";
import { waitFor } from "../src/testing/wait-for.js";
import { TEST_WORKFLOWS } from "./support/server.js";

const CHROMIUM = process.env.CAIRN_CHROMIUM ?? "/usr/bin/chromium";
const ARTIFACTS = join(import.meta.dirname, "..", "test-artifacts", "dashboard");
const haveChromium = existsSync(CHROMIUM);

if (!haveChromium && process.env.CI === "true") {
  describe("dashboard with token auth", () => {
    it("needs Chromium", () => {
      throw new Error(
        `Chromium is not at ${CHROMIUM} (set CAIRN_CHROMIUM, or apt-get install -y chromium); the browser tests cannot run under CI=true without it.`,
      );
    });
  });
} else {
  if (!haveChromium) console.warn(`dashboard browser tests skipped: no Chromium at ${CHROMIUM} (apt-get install -y chromium, or set CAIRN_CHROMIUM)`);
  describe.skipIf(!haveChromium)("dashboard with token auth", () => {
    let dir: string;
    let engine: Engine;
    let server: RunningServer;
    let browser: Browser;
    let readWrite: { token: string; id: string };
    let writeOnly: string;
    const pageErrors: string[] = [];

    beforeAll(async () => {
      const dashboardDir = builtDashboardDir();
      if (!dashboardDir) throw new Error("The dashboard is not built: run `npm run build` (npm test does) so dist/dashboard/ exists.");
      dir = mkdtempSync(join(tmpdir(), "cairn-dashboard-auth-"));
      mkdirSync(ARTIFACTS, { recursive: true });
      engine = await createEngine({ store: `sqlite:${join(dir, "cairn.db")}`, workflows: TEST_WORKFLOWS, logger: silentLogger });
      engine.startWorker({ pollInterval: 10 });
      server = await serve(engine, { host: "127.0.0.1", port: 0, streamPollMs: 20, dashboardDir, auth: "tokens" });
      const issued = await issueToken(engine.store, { name: "me", scopes: ["read", "write"] }, Date.now());
      readWrite = { token: issued.token, id: issued.record.id };
      writeOnly = (await issueToken(engine.store, { name: "bot", scopes: ["write"] }, Date.now())).token;
      await engine.start("paced", { steps: 1 }, { runId: "auth-waiting" });
      await engine.start("flaky", {}, { runId: "auth-failed" });
      await waitFor(async () => (await engine.getRun("auth-waiting")).status === "suspended", { what: "auth-waiting suspended" });
      await waitFor(async () => (await engine.getRun("auth-failed")).status === "failed", { what: "auth-failed failed" });
      browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"] });
    });

    afterAll(async () => {
      await browser?.close();
      await server?.close();
      await engine?.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
      expect(pageErrors, "errors thrown in the page").toEqual([]);
    });

    async function open(path: string): Promise<Page> {
      const page = await browser.newPage({ viewport: { width: 1366, height: 900 } });
      page.on("pageerror", (error) => pageErrors.push(error.message));
      await page.goto(`${server.url}${path}`);
      return page;
    }
    const shot = (page: Page, name: string) => page.screenshot({ path: join(ARTIFACTS, `auth-${name}.png`), fullPage: true });
    const stored = (page: Page) =>
      page.evaluate(() => (globalThis as unknown as { sessionStorage: { getItem(key: string): string | null } }).sessionStorage.getItem("cairn.token"));
    const rows = (page: Page) => page.locator("tr[data-run-id]").evaluateAll((trs) => trs.map((tr) => tr.getAttribute("data-run-id")).sort());

    it("asks for a token, refuses a wrong one and one without the read scope, and shows the runs with a right one", async () => {
      const page = await open("/ui/");
      const panel = page.getByRole("region", { name: "API token" });
      await expect.poll(() => panel.count()).toBe(1);
      expect(await panel.locator("h1").textContent()).toBe("This server needs an API token");
      const text = (await panel.textContent())!;
      expect(text).toContain("npx cairn token create --name me --scope read,write");
      // Not the API's message for programs, and no panel that claims there is nothing.
      expect(await page.locator("body").textContent()).not.toContain("Authorization: Bearer");
      expect(await page.locator(".tiles").count()).toBe(0);
      expect(await page.getByText("No failed runs.").count()).toBe(0);
      await shot(page, "1-asks-for-a-token");

      const field = panel.getByLabel("API token");
      await field.fill(`cairn_0123456789abcdef_${"x".repeat(43)}`);
      await panel.getByRole("button", { name: "Use token" }).click();
      const refused = panel.locator("[data-refused]");
      await expect.poll(() => refused.count()).toBe(1);
      expect(await refused.textContent()).toMatch(/^That token was refused: The API token is malformed, unknown or revoked/);
      expect(await stored(page)).toBeNull();
      await shot(page, "2-wrong-token");

      await field.fill(writeOnly);
      await panel.getByRole("button", { name: "Use token" }).click();
      await expect.poll(() => refused.textContent()).toContain('lacks the "read" scope');
      expect(await stored(page)).toBeNull();

      await field.fill(readWrite.token);
      await panel.getByRole("button", { name: "Use token" }).click();
      await expect.poll(() => panel.count()).toBe(0);
      await expect.poll(() => page.locator(".tile.status-failed .tile-value").textContent()).toBe("1");
      expect(await page.locator(".tile.status-suspended .tile-value").textContent()).toBe("1");
      await expect.poll(() => page.locator("[data-panel=failing-steps] tr[data-step=try]").count()).toBe(1);
      expect(await stored(page)).toBe(readWrite.token);
      expect(page.url()).toBe(`${server.url}/ui/`);
      await shot(page, "3-overview-with-token");

      await page.getByRole("link", { name: "Runs", exact: true }).click();
      await expect.poll(() => rows(page)).toEqual(["auth-failed", "auth-waiting"]);
      // Kept for the tab: a reload needs no token again, and the run page streams with it.
      await page.reload();
      await expect.poll(() => rows(page)).toEqual(["auth-failed", "auth-waiting"]);
      await page.locator('a[href="/ui/runs/auth-waiting"]').click();
      await expect.poll(() => page.locator('[data-kind="event.waiting"]').count()).toBe(1);

      await page.getByRole("button", { name: "Forget token" }).click();
      await expect.poll(() => panel.count()).toBe(1);
      expect(await stored(page)).toBeNull();
      expect(await page.getByRole("button", { name: "Forget token" }).count()).toBe(0);
      await page.close();
    });

    it("opens from a one-time ?ticket= link (a session, never the token, is kept; the link works once), drops a ?token= unused, and asks again when the token is revoked", async () => {
      const tokenLink = await open(`/ui/runs?status=failed&token=${encodeURIComponent(readWrite.token)}`);
      await expect.poll(() => tokenLink.getByRole("region", { name: "API token" }).count()).toBe(1);
      expect(tokenLink.url()).toBe(`${server.url}/ui/runs?status=failed`);
      expect(await stored(tokenLink)).toBeNull();
      await tokenLink.close();

      const asked = await fetch(`${server.url}/auth/tickets`, {
        method: "POST",
        headers: { authorization: `Bearer ${readWrite.token}`, "content-type": "application/json" },
        body: "{}",
      });
      expect(asked.status).toBe(201);
      const { ticket } = (await asked.json()) as { ticket: string };
      const link = `/ui/runs?status=failed&ticket=${encodeURIComponent(ticket)}`;
      const page = await open(link);
      await expect.poll(() => rows(page)).toEqual(["auth-failed"]);
      expect(page.url()).toBe(`${server.url}/ui/runs?status=failed`);
      expect(await stored(page)).toMatch(/^cairn_session_/);
      expect(await stored(page)).not.toContain(readWrite.token);

      // The link is used up: opened again (another tab), it gets the token panel.
      const again = await open(link);
      const refused = again.getByRole("region", { name: "API token" });
      await expect.poll(() => refused.count()).toBe(1);
      expect(await stored(again)).toBeNull();
      await again.close();

      await engine.store.revokeToken(readWrite.id, Date.now());
      const panel = page.getByRole("region", { name: "API token" });
      await expect.poll(() => panel.count(), { timeout: 10_000 }).toBe(1);
      expect(await panel.locator("h1").textContent()).toBe("This token was refused");
      expect(await panel.locator("[data-problem]").textContent()).toContain("revoked");
      await shot(page, "4-revoked");
      await panel.getByRole("button", { name: "Forget token" }).click();
      await expect.poll(() => panel.locator("h1").textContent()).toBe("This server needs an API token");
      expect(await stored(page)).toBeNull();
      await page.close();
    });
  });
}
