// The operator's pages in a real browser (Debian's Chromium via playwright-core) against a real
// server with token auth on a SQLite file: a schedule paused and resumed, a version retired, a dead
// outbox message retried and a token revoked through the UI, each checked in the store and the audit
// log afterwards; the JSON viewer's folding (by keyboard), bounds, escaping and copy; an axe-core scan
// of every new page. Screenshots of each page at 1366×900 and 800×900 go to test-artifacts/operator/.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createEngine } from "../src/engine/create-engine.js";
import { defineWorkflow } from "../src/engine/define-workflow.js";
import type { Engine } from "../src/engine/engine.js";
import { silentLogger } from "../src/engine/logger.js";
import { issueToken } from "../src/server/auth/tokens.js";
import { builtDashboardDir } from "../src/server/dashboard.js";
import { serve, type RunningServer } from "../src/server/serve.js";
import { waitFor } from "../src/testing/wait-for.js";

const CHROMIUM = process.env.CAIRN_CHROMIUM ?? "/usr/bin/chromium";
const ARTIFACTS = join(import.meta.dirname, "..", "test-artifacts", "operator");
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

const HOSTILE = "<img src=x onerror=alert(1)>";
/** The dead message's payload: markup as text, a long string, a long array, nesting. */
const PAYLOAD = {
  to: "ada",
  html: HOSTILE,
  long: "x".repeat(3000),
  order: { lines: Array.from({ length: 120 }, (_, i) => ({ sku: `sku-${i}`, qty: i })), note: "deep" },
};

/** Emits one mail: its handler fails until `mail.healed`, so with one attempt the message dies. */
const mail = { healed: false, delivered: 0 };
const notify = defineWorkflow({
  name: "notify",
  version: "1",
  async run(ctx) {
    await ctx.emit("mail.send", PAYLOAD);
    return "sent";
  },
});

/** Waits for an event that never comes: a live run of waiter@1, in a flow-control queue. */
const waiter = defineWorkflow({
  name: "waiter",
  version: "1",
  async run(ctx) {
    return ctx.waitForEvent("never");
  },
});

const haveChromium = existsSync(CHROMIUM);

describe.skipIf(!haveChromium && process.env.CI !== "true")("the operator's pages in a browser", () => {
  let dir: string;
  let engine: Engine;
  let server: RunningServer;
  let browser: Browser;
  let admin: string;
  let reader: string;
  let page: Page | undefined;
  let pageErrors: string[] = [];

  beforeAll(async () => {
    if (!haveChromium) throw new Error(`Chromium is not at ${CHROMIUM} (set CAIRN_CHROMIUM, or apt-get install -y chromium).`);
    const dashboardDir = builtDashboardDir();
    if (!dashboardDir) throw new Error("The dashboard is not built: run `npm run build` so dist/dashboard/ exists.");
    dir = mkdtempSync(join(tmpdir(), "cairn-operator-"));
    mkdirSync(ARTIFACTS, { recursive: true });
    engine = await createEngine({
      store: `sqlite:${join(dir, "cairn.db")}`,
      workflows: [notify, waiter],
      queues: { llm: { concurrency: 1, perKeyConcurrency: 1, rateLimit: { limit: 60, per: "1m" } } },
      outbox: {
        maxAttempts: 1,
        handlers: {
          "mail.send": () => {
            if (!mail.healed) return Promise.reject(new Error("SMTP 550 mailbox unavailable"));
            mail.delivered++;
            return Promise.resolve();
          },
        },
      },
      logger: silentLogger,
    });
    engine.startWorker({ pollInterval: 10 });
    server = await serve(engine, { host: "127.0.0.1", port: 0, streamPollMs: 20, dashboardDir, auth: "tokens" });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"] });
    const now = Date.now();
    admin = (await issueToken(engine.store, { name: "ops", scopes: ["read", "write", "admin"] }, now)).token;
    reader = (await issueToken(engine.store, { name: "viewer", scopes: ["read"] }, now)).token;
    await issueToken(engine.store, { name: "victim", scopes: ["read"] }, now);
    await engine.schedule({ name: "nightly", workflow: "waiter", cron: "0 3 * * *", input: { html: HOSTILE } });
    await engine.start("notify", null, { runId: "notify-1" });
    for (const n of [1, 2]) await engine.start("waiter", null, { runId: `wait-${n}`, queue: "llm", concurrencyKey: "acme" });
    await waitFor(async () => (await engine.listOutbox({ status: ["dead"] })).length === 1, { what: "the mail message to die", timeoutMs: 15_000 });
    await waitFor(async () => (await engine.getRun("wait-1")).status === "suspended", { what: "wait-1 to wait", timeoutMs: 15_000 });
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

  /** Opens a page signed in with `token` (kept in the tab's session storage, as the token panel keeps it). */
  async function open(path: string, options: { width?: number; token?: string; bypassCSP?: boolean; clipboard?: boolean } = {}): Promise<Page> {
    page = await browser.newPage({
      viewport: { width: options.width ?? 1366, height: 900 },
      bypassCSP: options.bypassCSP ?? false,
      ...(options.clipboard ? { permissions: ["clipboard-read", "clipboard-write"] } : {}),
    });
    pageErrors = [];
    page.on("pageerror", (error) => pageErrors.push(error.message));
    page.on("dialog", (dialog) => {
      pageErrors.push(`a dialog opened: ${dialog.message()}`);
      void dialog.dismiss();
    });
    await page.addInitScript(`sessionStorage.setItem("cairn.token", ${JSON.stringify(options.token ?? admin)})`);
    await page.goto(`${server.url}${path}`);
    await page.locator("main h1").first().waitFor({ timeout: 5000 });
    return page;
  }

  it("schedules: pause and resume through the UI; the store and the audit log agree", async () => {
    const p = await open("/ui/schedules");
    const row = p.locator('tr[data-schedule="nightly"]');
    await expect.poll(() => row.getAttribute("data-status")).toBe("active");
    await p.getByRole("button", { name: "Pause nightly" }).click();
    await expect.poll(() => row.getAttribute("data-status")).toBe("paused");
    expect((await engine.getSchedule("nightly")).status).toBe("paused");
    await p.locator("[data-action-outcome=ok]").filter({ hasText: "nightly paused." }).waitFor({ timeout: 5000 });
    await p.getByRole("button", { name: "Resume nightly" }).click();
    await expect.poll(() => row.getAttribute("data-status")).toBe("active");
    const schedule = await engine.getSchedule("nightly");
    expect(schedule.status).toBe("active");
    expect(schedule.nextTickAt).not.toBeNull();
    const audited = [...(await engine.store.listAudit({ action: "schedule.pause" })), ...(await engine.store.listAudit({ action: "schedule.resume" }))];
    expect(audited.map((e) => [e.action, e.actor, e.target]).sort()).toEqual([
      ["schedule.pause", "token:ops", "nightly"],
      ["schedule.resume", "token:ops", "nightly"],
    ]);
    // The schedule's input, markup included, is text.
    expect(await row.locator("details.json summary").textContent()).toContain(HOSTILE.slice(0, 20));
    expect(await p.locator("main img").count()).toBe(0);
  });

  it("versions: runs per status; retiring a version with live runs asks first, then the store has it retired", async () => {
    const p = await open("/ui/versions");
    const row = p.locator('tr[data-version="waiter@1"]');
    await expect.poll(() => row.getAttribute("data-retired")).toBe("false");
    expect(await p.locator('tr[data-version="notify@1"] td').allTextContents()).toEqual(expect.arrayContaining(["notify", "1"]));
    await p.getByRole("button", { name: "Retire waiter@1" }).click();
    await row.locator("[data-confirm]").filter({ hasText: "Its 2 live runs stop being claimed" }).waitFor({ timeout: 5000 });
    expect((await engine.listVersions()).find((v) => v.workflow === "waiter")!.drained).toBe(false);
    await row.getByRole("button", { name: "Yes, retire" }).click();
    await expect.poll(() => row.getAttribute("data-retired")).toBe("true");
    expect((await engine.listVersions()).find((v) => v.workflow === "waiter")!.drained).toBe(true);
    expect((await engine.store.listAudit({ action: "version.drain" })).map((e) => [e.actor, e.target])).toEqual([["token:ops", "waiter@1"]]);
    // The workflow's runs are one click away.
    expect(await row.getByRole("link", { name: "waiter" }).getAttribute("href")).toBe("/ui/runs?workflow=waiter");
  });

  it("outbox: a dead message's error and payload; retry through the UI delivers it, audited", async () => {
    const p = await open("/ui/outbox");
    const row = p.locator('tr[data-message="notify-1:mail.send#0"]');
    await expect.poll(() => row.getAttribute("data-status")).toBe("dead");
    expect(await row.locator("td.err").textContent()).toBe("SMTP 550 mailbox unavailable");
    mail.healed = true;
    await p.getByRole("button", { name: "Retry notify-1:mail.send#0" }).click();
    await p.locator("[data-action-outcome=ok]").filter({ hasText: "is queued again" }).waitFor({ timeout: 5000 });
    await waitFor(async () => (await engine.listOutbox({ status: ["delivered"] })).length === 1, { what: "the retried message to be delivered" });
    expect(mail.delivered).toBe(1);
    expect((await engine.store.listAudit({ action: "outbox.retry" })).map((e) => [e.actor, e.target])).toEqual([["token:ops", "notify-1:mail.send#0"]]);
    await p.getByRole("button", { name: "delivered" }).click();
    await expect.poll(() => p.locator('tr[data-message="notify-1:mail.send#0"]').getAttribute("data-status")).toBe("delivered");
  });

  it("tokens: create one (its text shown once, and it works), revoke another after a confirmation", async () => {
    const p = await open("/ui/tokens");
    await p.locator('tr[data-token="victim"]').waitFor({ timeout: 5000 });
    await p.getByLabel("Name", { exact: true }).fill("ci-deploys");
    await p.getByRole("button", { name: "Create" }).click();
    const shown = (await p.locator("[data-new-token] code").textContent())!;
    expect(shown).toMatch(/^cairn_[0-9a-f]+_/);
    expect((await fetch(`${server.url}/runs?limit=1`, { headers: { authorization: `Bearer ${shown}` } })).status).toBe(200);
    await p.locator('tr[data-token="ci-deploys"]').waitFor({ timeout: 5000 });

    const victim = p.locator('tr[data-token="victim"]');
    await p.getByRole("button", { name: "Revoke victim" }).click();
    await victim.getByRole("button", { name: "Yes, revoke" }).click();
    await expect.poll(() => victim.getAttribute("data-state")).toBe("revoked");
    const record = (await engine.store.listTokens()).find((t) => t.name === "victim")!;
    expect(record.revokedAt).not.toBeNull();
    const audited = await engine.store.listAudit({ action: "token.revoke" });
    expect(audited.map((e) => [e.actor, e.target])).toEqual([["token:ops", record.id]]);
    expect((await engine.store.listAudit({ action: "token.create" })).map((e) => e.detail?.name)).toEqual(["ci-deploys"]);

    // A token without the admin scope: the page says why, the rest of the dashboard still works.
    const q = await open("/ui/tokens", { token: reader });
    await q.locator("[data-load-error]").filter({ hasText: "admin" }).waitFor({ timeout: 5000 });
    expect(await q.locator(".token-panel").count()).toBe(0);
    await q.getByRole("link", { name: "Schedules" }).click();
    await q.locator('tr[data-schedule="nightly"]').waitFor({ timeout: 5000 });
  });

  it("JSON viewer: folds by keyboard, bounds long values, keeps markup as text, copies the exact JSON", async () => {
    const p = await open("/ui/outbox", { clipboard: true });
    await p.getByRole("button", { name: "all", exact: true }).click();
    // The chosen filter reads as chosen: its text is not the colour of its background.
    const chosen = await p.locator('[aria-pressed="true"]').evaluate((el) => {
      const style = (globalThis as unknown as { getComputedStyle(e: unknown): { color: string; backgroundColor: string } }).getComputedStyle(el);
      return [style.color, style.backgroundColor, el.textContent];
    });
    expect(chosen[0]).not.toBe(chosen[1]);
    expect(chosen[2]).toBe("all");
    const cell = p.locator('tr[data-message="notify-1:mail.send#0"] details.json');
    // Closed, the value is one summary line: no tree in the DOM.
    expect(await cell.locator("[data-json-tree]").count()).toBe(0);
    await cell.locator("summary").click();
    const tree = cell.locator("[data-json-tree]");
    await tree.waitFor({ timeout: 5000 });
    // The top level is open; nested values are folded, and unfold with the keyboard.
    const order = tree.getByRole("button", { name: /^Unfold "order" \(2 keys\)$/ });
    expect(await order.getAttribute("aria-expanded")).toBe("false");
    await order.focus();
    await p.keyboard.press("Enter");
    const fold = tree.getByRole("button", { name: /^Fold "order" \(2 keys\)$/ });
    expect(await fold.getAttribute("aria-expanded")).toBe("true");
    await tree.getByRole("button", { name: /^Unfold "lines" \(120 items\)$/ }).press("Space");
    // 120 lines: the first 50, then a button for the rest.
    const lines = tree.locator('li[data-json-depth="2"] > ul.json-children > li');
    expect(await lines.count()).toBe(50);
    await tree.getByRole("button", { name: "show 70 more of 70" }).click();
    expect(await lines.count()).toBe(120);
    await fold.press("Enter");
    expect(await tree.locator('li[data-json-depth="2"]').count()).toBe(0);
    // 3,000 characters: cut, with a button for all of them.
    const long = tree.locator("li.json-leaf", { hasText: '"long":' });
    expect((await long.locator(".json-string").textContent())!.length).toBeLessThan(600);
    await long.getByRole("button", { name: "show all 3,000 characters" }).click();
    expect(await long.locator(".json-string").textContent()).toBe(JSON.stringify(PAYLOAD.long));
    // Markup is text: no element made of it, no handler run (a dialog would be an error).
    expect(await tree.locator("li.json-leaf", { hasText: '"html":' }).locator(".json-string").textContent()).toBe(JSON.stringify(HOSTILE));
    expect(await p.locator("main img").count()).toBe(0);
    await p.screenshot({ path: join(ARTIFACTS, "json-viewer-1366x900.png"), fullPage: true });
    // Copy: the exact JSON of the value.
    await cell.getByRole("button", { name: "Copy JSON" }).click();
    await cell.getByRole("status").filter({ hasText: "Copied" }).waitFor({ timeout: 5000 });
    expect(await p.evaluate<string>("navigator.clipboard.readText()")).toBe(JSON.stringify(PAYLOAD, null, 2));
  });

  it("accessibility and layout: axe finds no serious or critical violation on any operator page; none scrolls sideways at 800 px", async () => {
    const pages = ["schedules", "queues", "outbox", "versions", "audit", "tokens"];
    const found: Record<string, string[]> = {};
    for (const name of pages) {
      for (const width of [1366, 800]) {
        const p = await open(`/ui/${name}`, { width, bypassCSP: true });
        await p.locator("main table, main .empty").first().waitFor({ timeout: 5000 });
        await p.screenshot({ path: join(ARTIFACTS, `${name}-${width}x900.png`), fullPage: true });
        await p.addScriptTag({ content: AXE_SOURCE });
        const result = await p.evaluate<{ violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }>("axe.run(document)");
        const violations = result.violations
          .filter((v) => v.impact === "serious" || v.impact === "critical")
          .map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
        if (violations.length) found[`${name}@${width}`] = violations;
        expect(await p.evaluate<boolean>("document.scrollingElement.scrollWidth <= document.scrollingElement.clientWidth"), `${name} at ${width} px`).toBe(
          true,
        );
        await page!.close();
        page = undefined;
      }
    }
    expect(found).toEqual({});
    // The queues page shows the declared limits and the waiting run.
    const p = await open("/ui/queues");
    const row = p.locator('tr[data-queue="llm"]');
    await row.waitFor({ timeout: 5000 });
    expect(await row.locator("td").nth(1).textContent()).toBe("1 at once · 1 per key · 60 per 1 min");
  }, 120_000);
});
