// A hostile page in a real browser against a real `cairn serve` child process (SQLite file, no
// auth, the default local mode). A page served from another origin tries what any site the
// operator visits could try: a no-cors text/plain fetch, a text/plain form POST whose body is
// valid JSON, and framing the dashboard. Nothing may be written and the frame must stay empty.
// The real dashboard must still work under its CSP (no violation reported).
import { createServer, type Server } from "node:http";
import { existsSync, mkdtempSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rawRequest, spawnServe, type ServeProcess } from "./support/serve-process.js";
import { waitFor } from "../src/testing/wait-for.js";

const CHROMIUM = process.env.CAIRN_CHROMIUM ?? "/usr/bin/chromium";
const haveChromium = existsSync(CHROMIUM);

function attackerPage(target: string): string {
  const body = JSON.stringify({ workflow: "refund", input: { orderId: "o-1" }, runId: "pwned-fetch" });
  return `<!doctype html><html><head><title>loading</title></head><body>
<form id="f" method="POST" action="${target}/runs" enctype="text/plain" target="sink">
  <input name='{"workflow":"refund","input":{"orderId":"o-1"},"runId":"pwned-form","pad":"' value='"}'>
</form>
<iframe name="sink"></iframe>
<iframe id="ui" src="${target}/ui/"></iframe>
<script>
  fetch(${JSON.stringify(target + "/runs")}, { method: "POST", mode: "no-cors", headers: { "content-type": "text/plain" }, body: ${JSON.stringify(body)} })
    .catch(() => undefined)
    .finally(() => { document.title = "fetched"; });
  document.getElementById("f").submit();
</script></body></html>`;
}

if (!haveChromium && process.env.CI === "true") {
  describe("cross-site page against cairn serve", () => {
    it("needs Chromium", () => {
      throw new Error(
        `Chromium is not at ${CHROMIUM} (set CAIRN_CHROMIUM, or apt-get install -y chromium); the browser tests cannot run under CI=true without it.`,
      );
    });
  });
} else {
  if (!haveChromium) console.warn(`cross-site browser tests skipped: no Chromium at ${CHROMIUM}`);
  describe.skipIf(!haveChromium)("cross-site page against cairn serve", () => {
    let cairn: ServeProcess;
    let attacker: Server;
    let attackerUrl: string;
    let browser: Browser;

    beforeAll(async () => {
      attacker = createServer((_req, res) => res.writeHead(200, { "content-type": "text/html" }).end(attackerPage(cairn.url)));
      await new Promise<void>((done) => attacker.listen(0, "127.0.0.1", done));
      attackerUrl = `http://127.0.0.1:${(attacker.address() as AddressInfo).port}`;
      browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"] });
    }, 60_000);

    afterAll(async () => {
      await browser?.close();
      await new Promise((done) => attacker?.close(done));
    });

    /** A fresh server per test (child processes are killed after each test). */
    async function startCairn(): Promise<void> {
      const dir = mkdtempSync(join(tmpdir(), "cairn-cross-site-"));
      cairn = await spawnServe(["--store", `sqlite:${join(dir, "cairn.db")}`, "--workflows", resolve("test/fixtures/dashboard-workflows.mjs")]);
    }

    const runIds = async () => (await rawRequest(cairn.port, "GET", "/runs", { host: `127.0.0.1:${cairn.port}` })).json.runs.map((r: any) => r.runId);

    it("a page on another origin can neither start runs (fetch or form) nor frame /ui/", async () => {
      await startCairn();
      const page = await browser.newPage();
      const console: string[] = [];
      page.on("console", (message) => console.push(message.text()));
      const posts: number[] = [];
      page.on("response", (response) => {
        if (response.request().method() === "POST" && response.url().startsWith(cairn.url)) posts.push(response.status());
      });
      await page.goto(attackerUrl);
      await expect.poll(() => page.title(), { timeout: 10_000 }).toBe("fetched");
      // The form's POST reached the server and was refused.
      await waitFor(() => posts.length >= 2, { what: "both POSTs answered", timeoutMs: 10_000 });
      expect(posts).toEqual([403, 403]);
      expect(await runIds()).toEqual([]);
      // The dashboard frame was blocked: Chromium says why, and no frame holds the app.
      await expect.poll(() => console.some((line) => line.includes("frame-ancestors 'none'")), { timeout: 10_000 }).toBe(true);
      for (const frame of page.frames()) {
        if (frame === page.mainFrame()) continue;
        const hasApp = await frame
          .locator("nav.top")
          .count()
          .then((n) => n > 0)
          .catch(() => false);
        expect([frame.url(), hasApp]).toEqual([frame.url(), false]);
      }
      await page.close();
    });

    it("the dashboard itself works under its CSP: it renders and starts a run, with no violation reported", async () => {
      await startCairn();
      const page = await browser.newPage();
      const violations: string[] = [];
      page.on("console", (message) => {
        if (/Content Security Policy|Refused to/i.test(message.text())) violations.push(message.text());
      });
      const errors: string[] = [];
      page.on("pageerror", (error) => errors.push(error.message));
      await page.goto(`${cairn.url}/ui/runs`);
      await page.getByText("Start a run", { exact: true }).first().click();
      const form = page.locator('form[aria-label="start a run"]');
      await expect.poll(() => form.locator("option").allTextContents()).toContain("refund@1");
      await form.getByLabel("workflow").selectOption("refund@1");
      await form.getByLabel("run id").fill("from-dashboard");
      await form.getByLabel("run input").fill('{"orderId":"o-2"}');
      await form.getByRole("button", { name: "Start" }).click();
      await expect.poll(() => page.url()).toBe(`${cairn.url}/ui/runs/from-dashboard`);
      expect(await runIds()).toEqual(["from-dashboard"]);
      expect(violations).toEqual([]);
      expect(errors).toEqual([]);
      await page.close();
    });
  });
}
