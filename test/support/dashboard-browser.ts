// The set-up the dashboard's browser suites share: a SQLite engine in a temporary directory, served
// with the built dashboard, and Debian's Chromium driven by playwright-core; pages opened on it with
// the errors they throw collected, so each test can check none was thrown.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { createEngine } from "../../src/engine/create-engine.js";
import type { Engine, EngineOptions, Worker, WorkerOptions } from "../../src/engine/engine.js";
import { silentLogger } from "../../src/engine/logger.js";
import { builtDashboardDir } from "../../src/server/dashboard.js";
import { serve, type RunningServer } from "../../src/server/serve.js";

/** Where Chromium is (`CAIRN_CHROMIUM`, else Debian's). */
export const CHROMIUM = process.env.CAIRN_CHROMIUM ?? "/usr/bin/chromium";
/** Whether Chromium is there: the suites are skipped without it, except in CI, where its absence fails them. */
export const haveChromium = existsSync(CHROMIUM);
/** axe-core's script, to inject into a page for an accessibility scan. */
export const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

/** A served engine and a browser, for one suite. */
export interface DashboardBench {
  dir: string;
  engine: Engine;
  worker: Worker;
  server: RunningServer;
  browser: Browser;
  /** Closes the browser, the server and the engine, and removes the directory. */
  close(): Promise<void>;
}

/** What {@link startDashboardBench} starts. */
export interface DashboardBenchOptions {
  /** The temporary directory's name prefix, e.g. `cairn-console-`. */
  prefix: string;
  /** Where the suite's screenshots go (created). */
  artifacts: string;
  workflows: EngineOptions["workflows"];
  worker: WorkerOptions;
}

/**
 * Opens a SQLite engine in a new temporary directory, starts a worker, serves the engine with the
 * built dashboard on 127.0.0.1 and launches Chromium. What was started is closed again if a later
 * part fails.
 */
export async function startDashboardBench(options: DashboardBenchOptions): Promise<DashboardBench> {
  if (!haveChromium) throw new Error(`Chromium is not at ${CHROMIUM} (set CAIRN_CHROMIUM, or apt-get install -y chromium).`);
  const dashboardDir = builtDashboardDir();
  if (!dashboardDir) throw new Error("The dashboard is not built: run `npm run build` so dist/dashboard/ exists.");
  const dir = mkdtempSync(join(tmpdir(), options.prefix));
  let engine: Engine | undefined;
  let server: RunningServer | undefined;
  let browser: Browser | undefined;
  const close = async () => {
    await browser?.close();
    await server?.close();
    await engine?.close();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    mkdirSync(options.artifacts, { recursive: true });
    engine = await createEngine({ store: `sqlite:${join(dir, "cairn.db")}`, workflows: options.workflows, logger: silentLogger });
    const worker = engine.startWorker(options.worker);
    server = await serve(engine, { host: "127.0.0.1", port: 0, streamPollMs: 20, dashboardDir });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"] });
    return { dir, engine, worker, server, browser, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/** The suite's open page, and the errors thrown in it. */
export class BenchPages {
  /** The page last opened, until it is closed. */
  page: Page | undefined;
  /** Errors thrown in the page last opened. */
  errors: string[] = [];

  constructor(private readonly bench: () => DashboardBench) {}

  /** Opens `path` of the server in a new page, 900 px high. `bypassCSP` lets a scan inject axe-core past the dashboard's script-src 'self' policy. */
  async open(path: string, width = 1366, bypassCSP = false): Promise<Page> {
    const { browser, server } = this.bench();
    const page = (this.page = await browser.newPage({ viewport: { width, height: 900 }, bypassCSP }));
    this.errors = [];
    page.on("pageerror", (error) => this.errors.push(error.message));
    await page.goto(`${server.url}${path}`);
    return page;
  }

  /** Closes the open page, if any. */
  async close(): Promise<void> {
    await this.page?.close();
    this.page = undefined;
  }
}
