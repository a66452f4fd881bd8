// The dashboard's transcript with the blocks real providers produce, in Debian's Chromium: a user turn
// with an image by URL, a base64 PDF and a provider file id (shown by what they are, not by
// their bytes), and an answer with provider-hosted tool blocks (a web search call and its result). Names and
// values come from the model and the user, so they are rendered as text: markup in them stays text.
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defineAgent, type AgentResult } from "../src/agent/agent.js";
import { ScriptedModel } from "../src/agent/model/scripted.js";
import { createEngine } from "../src/engine/create-engine.js";
import type { Engine } from "../src/engine/engine.js";
import { silentLogger } from "../src/engine/logger.js";
import { builtDashboardDir } from "../src/server/dashboard.js";
import { serve, type RunningServer } from "../src/server/serve.js";

const CHROMIUM = process.env.CAIRN_CHROMIUM ?? "/usr/bin/chromium";
const ARTIFACTS = join(import.meta.dirname, "..", "test-artifacts", "dashboard");
const haveChromium = existsSync(CHROMIUM);

const PDF_BYTES = Buffer.from("%PDF-1.4 quarterly report, a secret line the page must not show").toString("base64");
const INJECTED = "<img src=x onerror=window.__pwned=1>";

const searcher = defineAgent({
  name: "searcher",
  model: () =>
    new ScriptedModel([
      {
        content: [
          {
            type: "hosted_tool",
            name: "web_search",
            id: "srvtoolu_1",
            phase: "call",
            input: { query: `tides ${INJECTED}` },
            provider: { anthropic: { block: {} } },
          },
          {
            type: "hosted_tool",
            name: "web_search",
            id: "srvtoolu_1",
            phase: "result",
            output: [{ url: "https://example.com/tides", title: "Tides explained" }],
            provider: { anthropic: { block: {} } },
          },
          { type: "text", text: "The chart shows spring tides." },
        ],
      },
    ]),
});

describe.skipIf(!haveChromium && process.env.CI !== "true")("dashboard transcript: images, files and provider-hosted tools", () => {
  let dir: string;
  let engine: Engine;
  let server: RunningServer;
  let browser: Browser;

  beforeAll(async () => {
    if (!haveChromium) throw new Error(`Chromium is not at ${CHROMIUM} (set CAIRN_CHROMIUM, or apt-get install -y chromium).`);
    const dashboardDir = builtDashboardDir();
    if (!dashboardDir) throw new Error("The dashboard is not built: run `npm run build` (npm test does) so dist/dashboard/ exists.");
    dir = mkdtempSync(join(tmpdir(), "cairn-dashboard-blocks-"));
    mkdirSync(ARTIFACTS, { recursive: true });
    engine = await createEngine({ store: `sqlite:${join(dir, "cairn.db")}`, workflows: [searcher], logger: silentLogger });
    engine.startWorker({ pollInterval: 10 });
    server = await serve(engine, { host: "127.0.0.1", port: 0, streamPollMs: 20, dashboardDir });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"] });
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await engine?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("shows what each block is, hosted tool calls with their input and output, and no markup or bytes from them", async () => {
    const run = await engine.start(
      searcher,
      {
        messages: [
          {
            role: "user",
            content: [
              { type: "text", text: "What does the chart say?" },
              { type: "image", source: { type: "url", url: "https://cdn.example.com/chart.png" } },
              { type: "file", source: { type: "base64", mediaType: "application/pdf", data: PDF_BYTES }, filename: "report.pdf" },
              { type: "file", source: { type: "file_id", fileId: "file-abc123" } },
            ],
          },
        ],
      },
      { runId: "blocks-1" },
    );
    expect(((await run.result({ timeoutMs: 20_000 })) as AgentResult).text).toBe("The chart shows spring tides.");

    const page = await browser.newPage({ viewport: { width: 1366, height: 900 } });
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    await page.goto(`${server.url}/ui/runs/blocks-1`);
    await expect.poll(() => page.locator("header [data-status]").getAttribute("data-status")).toBe("completed");

    const transcript = page.locator('ol[aria-label="transcript"] > li');
    await expect.poll(() => transcript.evaluateAll((items) => items.map((item) => item.getAttribute("data-role")))).toEqual(["user", "assistant"]);
    const user = (await transcript.nth(0).textContent()) ?? "";
    expect(user).toContain("What does the chart say?");
    expect(user).toContain("[image https://cdn.example.com/chart.png]");
    expect(user).toContain("[file report.pdf]");
    expect(user).toContain("[file file-abc123]");
    // The transcript names the file; its bytes stay out of it (the journal's input view shows the value, elided).
    expect(await page.locator('ol[aria-label="transcript"]').innerHTML()).not.toContain(PDF_BYTES.slice(0, 24));

    const hosted = page.locator('[data-hosted-tool="web_search"]');
    await expect.poll(() => hosted.count()).toBe(2);
    expect(await hosted.nth(0).textContent()).toMatch(/hosted\s*web_search\s*\(call\)/);
    expect(await hosted.nth(0).textContent()).toContain(INJECTED); // shown as text…
    expect(await hosted.nth(1).textContent()).toMatch(/\(result\)/);
    expect(await hosted.nth(1).textContent()).toContain("Tides explained");
    expect(await transcript.nth(1).textContent()).toContain("The chart shows spring tides.");
    expect(await page.locator("img[src=x]").count()).toBe(0); // …never as markup
    expect(await page.evaluate(() => (globalThis as unknown as { __pwned?: number }).__pwned)).toBeUndefined();

    await page.screenshot({ path: join(ARTIFACTS, "agent-blocks.png"), fullPage: true });
    await page.close();
    expect(errors, "errors thrown in the page").toEqual([]);
  });
});
