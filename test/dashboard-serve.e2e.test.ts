// The dashboard in a real browser against a real `cairn serve` child process (built CLI, SQLite
// file, workflows from test/fixtures/dashboard-workflows.mjs): start a run, answer its question
// through the input-schema form (a 422 first), watch it complete, read its timeline, filter runs
// by text, see an expired question that cancelled its run and the top failing steps. The server is
// SIGKILLed at the end and must be gone. Screenshots go to test-artifacts/dashboard/.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CairnClient } from "../src/client/client.js";
import { waitFor } from "../src/testing/wait-for.js";

const CHROMIUM = process.env.CAIRN_CHROMIUM ?? "/usr/bin/chromium";
const ARTIFACTS = join(import.meta.dirname, "..", "test-artifacts", "dashboard");
const MAIN = resolve("dist/src/cli/main.js");
const WORKFLOWS = resolve("test/fixtures/dashboard-workflows.mjs");
const haveChromium = existsSync(CHROMIUM);

if (!haveChromium && process.env.CI === "true") {
  describe("dashboard against cairn serve", () => {
    it("needs Chromium", () => {
      throw new Error(
        `Chromium is not at ${CHROMIUM} (set CAIRN_CHROMIUM, or apt-get install -y chromium); the browser tests cannot run under CI=true without it.`,
      );
    });
  });
} else {
  if (!haveChromium) console.warn(`dashboard browser tests skipped: no Chromium at ${CHROMIUM} (apt-get install -y chromium, or set CAIRN_CHROMIUM)`);
  describe.skipIf(!haveChromium)("dashboard against cairn serve", () => {
    let dir: string;
    let server: ChildProcess;
    let output = "";
    let url: string;
    let api: CairnClient;
    let browser: Browser;
    const pageErrors: string[] = [];

    /** Spawns `cairn serve` on a free port and resolves with its URL once it says it listens. */
    function startServer(): Promise<string> {
      server = spawn(process.execPath, [MAIN, "serve", "--store", `sqlite:${join(dir, "cairn.db")}`, "--workflows", WORKFLOWS, "--port", "0"], {
        stdio: ["ignore", "pipe", "pipe"],
        env: { ...process.env, NO_COLOR: "1" },
      });
      return new Promise((resolveUrl, reject) => {
        const timer = setTimeout(() => reject(new Error(`cairn serve did not say it listens within 20 s:\n${output}`)), 20_000);
        const read = (chunk: Buffer) => {
          output += chunk.toString();
          const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
          if (match) {
            clearTimeout(timer);
            resolveUrl(match[1]!);
          }
        };
        server.stdout!.on("data", read);
        server.stderr!.on("data", read);
        server.once("exit", (code, signal) => {
          clearTimeout(timer);
          reject(new Error(`cairn serve exited (code ${code}, signal ${signal}) before listening:\n${output}`));
        });
      });
    }

    beforeAll(async () => {
      for (const built of [MAIN, resolve("dist/dashboard/index.html")]) {
        if (!existsSync(built)) throw new Error(`${built} is missing: run \`npm run build\` first.`);
      }
      dir = mkdtempSync(join(tmpdir(), "cairn-dashboard-serve-"));
      mkdirSync(ARTIFACTS, { recursive: true });
      url = await startServer();
      api = new CairnClient({ baseUrl: url });
      browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"] });
    }, 60_000);

    afterAll(async () => {
      await browser?.close();
      if (server && server.exitCode === null && server.signalCode === null) {
        const exited = new Promise((done) => server.once("exit", done));
        server.kill("SIGKILL");
        await exited;
      }
      if (server?.pid !== undefined) {
        // Gone for good: signal 0 to the pid finds no process.
        expect(() => process.kill(server.pid!, 0)).toThrow();
      }
      if (dir) rmSync(dir, { recursive: true, force: true });
      expect(pageErrors, "errors thrown in the page").toEqual([]);
    });

    async function open(path: string): Promise<Page> {
      const page = await browser.newPage({ viewport: { width: 1366, height: 900 } });
      page.on("pageerror", (error) => pageErrors.push(error.message));
      await page.goto(`${url}${path}`);
      return page;
    }
    const shot = (page: Page, name: string) => page.screenshot({ path: join(ARTIFACTS, `serve-${name}.png`), fullPage: true });
    const status = (runId: string, wanted: string) =>
      waitFor(async () => (await api.getRun(runId)).status === wanted, { what: `${runId} ${wanted}`, timeoutMs: 15_000 });

    it("starts a run, answers its schema question in the inbox (a 422 first), and shows the finished timeline", async () => {
      const page = await open("/ui/runs");
      await page.getByText("Start a run", { exact: true }).first().click();
      const form = page.locator('form[aria-label="start a run"]');
      await expect.poll(() => form.locator("option").allTextContents()).toContain("refund@1");
      await form.getByLabel("workflow").selectOption("refund@1");
      await form.getByLabel("run id").fill("refund-ui-1");
      await form.getByLabel("run input").fill('{"orderId":"o-77"}');
      await form.getByRole("button", { name: "Start" }).click();
      await expect.poll(() => page.url()).toBe(`${url}/ui/runs/refund-ui-1`);
      await expect.poll(() => page.locator('[data-kind="human.requested"]').count(), { timeout: 15_000 }).toBe(1);
      expect(await page.locator('[data-kind="human.requested"]').textContent()).toContain("asks for { amount, reason, channel, rush }");

      await page.getByRole("link", { name: "Human requests", exact: true }).click();
      const card = page.locator('[data-request-id="refund-ui-1:amount#0"]');
      await expect.poll(() => card.count()).toBe(1);
      // A field per property, each with its input type.
      expect(await card.locator('[data-field="amount"] input').getAttribute("type")).toBe("number");
      expect(await card.locator('[data-field="reason"] input').getAttribute("type")).toBe("text");
      expect(await card.locator('[data-field="channel"] select option').allTextContents()).toEqual(["—", "card", "voucher"]);
      expect(await card.locator('[data-field="rush"] input').getAttribute("type")).toBe("checkbox");
      expect(await card.locator('[data-field="amount"]').textContent()).toContain("In cents, at most the order total.");
      await shot(page, "1-inbox-form");

      // The server checks the value against the schema: a 422, shown under the fields it names.
      await card.getByLabel("amount").fill("99999");
      await card.getByLabel("reason").fill("no");
      await card.getByLabel("channel").selectOption("card");
      await card.getByRole("button", { name: "Send answer" }).click();
      await expect.poll(() => card.locator('[data-field="amount"] .field-error').count()).toBe(1);
      expect(await card.locator('[data-field="amount"] .field-error').textContent()).toMatch(/4200/);
      expect(await card.locator('[data-field="reason"] .field-error').textContent()).toMatch(/3/);
      expect(await card.locator('[data-field="channel"] .field-error').count()).toBe(0);
      expect(await card.locator(".error-box").textContent()).toContain("422");
      await shot(page, "2-inbox-422");
      expect((await api.getRun("refund-ui-1")).status).toBe("suspended");

      await card.getByLabel("amount").fill("1500");
      await card.getByLabel("reason").fill("arrived broken");
      await card.getByLabel("rush").check();
      await card.getByLabel("your name").fill("grace");
      await card.getByRole("button", { name: "Send answer" }).click();
      await status("refund-ui-1", "completed");
      await expect.poll(() => card.count()).toBe(0);
      expect((await api.getRun("refund-ui-1")).output).toEqual({ refunded: 1500, via: "card", by: "grace" });
      const [answered] = await api.listHumanRequests({ runId: "refund-ui-1" });
      expect(answered?.answer).toMatchObject({ action: "answer", value: { amount: 1500, reason: "arrived broken", channel: "card", rush: true }, by: "grace" });

      await page.locator('a[href="/ui/runs/refund-ui-1"]').first().click();
      await expect.poll(() => page.locator("header [data-status]").getAttribute("data-status")).toBe("completed");
      await expect.poll(() => page.locator('[data-kind="run.completed"]').count()).toBe(1);
      const answerEntry = await page.locator('[data-kind="human.answered"]').textContent();
      expect(answerEntry).toContain("by grace");
      expect(answerEntry).toContain("arrived broken");
      await shot(page, "3-timeline");
      await page.close();
    });

    it("answers a request whose schema is not a flat object in a JSON editor, showing the server's 422", async () => {
      await api.startRun({ workflow: "labels", runId: "labels-1" });
      await status("labels-1", "suspended");
      const page = await open("/ui/inbox");
      const card = page.locator('[data-request-id="labels-1:pick#0"]');
      await expect.poll(() => card.count()).toBe(1);
      expect(await card.locator("[data-field]").count()).toBe(0);
      await card.getByLabel("answer value").fill("{not json");
      await card.getByRole("button", { name: "Send answer" }).click();
      await expect.poll(() => card.locator(".error-box").textContent()).toContain("not valid JSON");
      await card.getByLabel("answer value").fill('{"labels":[]}');
      await card.getByRole("button", { name: "Send answer" }).click();
      await expect.poll(() => card.locator(".error-box").textContent()).toContain("does not match its input schema: labels:");
      await shot(page, "2b-inbox-json-422");
      await card.getByLabel("answer value").fill('{"labels":["urgent","fragile"]}');
      await card.getByRole("button", { name: "Send answer" }).click();
      await status("labels-1", "completed");
      expect((await api.getRun("labels-1")).output).toEqual(["urgent", "fragile"]);
      await page.close();
    });

    it("filters runs by text (id, workflow, error message), kept in the URL across a reload", async () => {
      await api.startRun({ workflow: "brittle", runId: "charge-a" });
      await api.startRun({ workflow: "brittle", runId: "charge-b" });
      await status("charge-a", "failed");
      await status("charge-b", "failed");

      const page = await open("/ui/runs");
      const rows = () => page.locator("tr[data-run-id]").evaluateAll((trs) => trs.map((tr) => tr.getAttribute("data-run-id")).sort());
      await expect.poll(rows).toEqual(["charge-a", "charge-b", "labels-1", "refund-ui-1"]);
      const search = page.getByLabel("search runs");
      await search.fill("REFUND-UI");
      await search.press("Enter");
      await expect.poll(() => page.url()).toBe(`${url}/ui/runs?q=REFUND-UI`);
      await expect.poll(rows).toEqual(["refund-ui-1"]);
      await page.reload();
      await expect.poll(rows).toEqual(["refund-ui-1"]);
      expect(await page.getByLabel("search runs").inputValue()).toBe("REFUND-UI");

      // The error message is searched too, with the status chips.
      await page.getByLabel("search runs").fill("declined");
      await page.getByLabel("search runs").press("Enter");
      await page.getByRole("button", { name: "failed", exact: true }).click();
      await expect.poll(() => page.url()).toBe(`${url}/ui/runs?status=failed&q=declined`);
      await expect.poll(rows).toEqual(["charge-a", "charge-b"]);
      await shot(page, "4-runs-search");
      await page.getByLabel("search runs").fill("nothing like it");
      await page.getByLabel("search runs").press("Enter");
      await expect.poll(() => page.locator(".empty").textContent()).toBe("No runs match.");
      await page.close();
    });

    it("shows a failed saga's run: steps, retries and failed steps counted from the journal, long kinds that fit their column", async () => {
      await api.startRun({ workflow: "trip", runId: "trip-1" });
      await status("trip-1", "compensation_failed");
      const page = await open("/ui/runs/trip-1");
      await expect.poll(() => page.locator('[data-kind="run.compensation_failed"]').count()).toBe(1);
      for (const kind of ["compensation.started", "compensation.completed", "compensation.failed", "resource.release_failed", "saga.compensating"])
        expect(await page.locator(`[data-kind="${kind}"]`).count(), kind).toBeGreaterThan(0);
      // acquire:sandbox, book-flight, book-hotel…, pay: four steps; pay's second attempt is the one retry, and it failed.
      expect(await page.locator('[data-fact="steps"]').textContent()).toBe("4");
      expect(await page.locator('[data-fact="retries"]').textContent()).toBe("1");
      expect(await page.locator('[data-fact="failed-steps"]').textContent()).toContain("1 failed");
      await shot(page, "5b-saga-timeline");
      // Every kind and op key stays inside its own column: nothing runs into the next one.
      const overflows = await page.locator("li.entry").evaluateAll((rows) =>
        rows.flatMap((row) => {
          const kind = row.querySelector(".kind")!;
          const op = row.querySelector(".op")!;
          const what = row.querySelector(".what")!;
          const bad: string[] = [];
          if (kind.getBoundingClientRect().right > op.getBoundingClientRect().left || kind.scrollWidth > kind.clientWidth + 1)
            bad.push(`kind ${kind.textContent}`);
          if (op.getBoundingClientRect().right > what.getBoundingClientRect().left || op.scrollWidth > op.clientWidth + 1) bad.push(`op ${op.textContent}`);
          return bad;
        }),
      );
      expect(overflows).toEqual([]);
      await page.close();
    });

    it("shows an expired question that cancelled its run as such, and the top failing steps", async () => {
      await api.startRun({ workflow: "expiring", runId: "late-1" });
      await status("late-1", "cancelled");
      const page = await open("/ui/runs/late-1");
      const timedOut = page.locator('[data-kind="human.timedout"]');
      await expect.poll(() => timedOut.count()).toBe(1);
      expect(await timedOut.textContent()).toContain("timed out, run cancelled");
      await shot(page, "5-timed-out-cancel");

      // The overview with completed, failed, cancelled, compensation_failed and waiting runs.
      await api.startRun({ workflow: "refund", runId: "refund-waiting", input: { orderId: "o-78" } });
      await status("refund-waiting", "suspended");
      await page.goto(`${url}/ui/`);
      const row = page.locator('[data-panel="failing-steps"] tr[data-step="charge-card"]');
      await expect.poll(() => row.count()).toBe(1);
      const text = await row.textContent();
      expect(text).toContain("2×");
      expect(text).toContain("brittle");
      expect(text).toContain("card declined by the bank");
      await expect.poll(() => page.locator(".tile.status-suspended .tile-value").textContent()).toBe("1");
      // Two questions answered by people (refund-ui-1, labels-1); late-1's timed out, which is no answer.
      const human = page.locator(".panel", { has: page.getByRole("heading", { name: "Human input" }) });
      await expect.poll(() => human.textContent()).toMatch(/^Human input2 answered · median wait .+1 timed out unanswered\.$/);
      await shot(page, "6-overview");
      await page.close();
    });
  });
}
