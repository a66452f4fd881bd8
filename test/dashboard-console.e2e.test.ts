// The operator's console in a real browser (Debian's Chromium via playwright-core) against a real
// server on a SQLite file: the runs list's total, filters and bulk actions; one time format with a
// zone and a UTC/local switch; stack traces with the user's frames first; an axe-core scan of every
// page. Screenshots of each page at 1366×900 and 800×900 go to test-artifacts/console/.
import { join } from "node:path";
import { type Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { NonRetryableError } from "../src/core/errors.js";
import { defineWorkflow } from "../src/engine/define-workflow.js";
import type { Engine } from "../src/engine/engine.js";
import { type RunningServer } from "../src/server/serve.js";
import { waitFor } from "../src/testing/wait-for.js";
import { ask } from "./support/server.js";
import { AXE_SOURCE, BenchPages, haveChromium, startDashboardBench, type DashboardBench } from "./support/dashboard-browser.js";

const ARTIFACTS = join(import.meta.dirname, "..", "test-artifacts", "console");

/** Greets; input and tags are searched. */
const greet = defineWorkflow({
  name: "greet",
  version: "1",
  async run(ctx, input: { customer: string }) {
    return ctx.step("hello", () => `hello ${input.customer}`);
  },
});

/** Starts two children: the runs list can hide them. */
const fanout = defineWorkflow({
  name: "fanout",
  version: "1",
  async run(ctx) {
    return Promise.all([1, 2].map((n) => ctx.child(greet, { customer: `child-${n}` }, { name: `c${n}` })));
  },
});

/** Waits for an event that never comes: cancelled in bulk. */
const waiter = defineWorkflow({
  name: "waiter",
  version: "1",
  async run(ctx) {
    return ctx.waitForEvent("never");
  },
});

/** Fails at once with a long message that differs only at its end. */
const failing = defineWorkflow({
  name: "failing",
  version: "1",
  async run(ctx, input: { order: number }) {
    return ctx.step("call", () => {
      throw new NonRetryableError(`request to https://payments.example.com/v1/charges/create failed for order ${input.order}`);
    });
  },
});

/** Records the time, then sleeps two days: a timer whose wake-up is not today. */
const stamp = defineWorkflow({
  name: "stamp",
  version: "1",
  async run(ctx) {
    ctx.now();
    await ctx.sleep("nap", "2d");
    return "woke";
  },
});

/** Books, then a charge fails: the saga compensates, journaling one error three times. */
const trip = defineWorkflow({
  name: "trip",
  version: "1",
  async run(ctx) {
    await ctx.step("book", () => "booking-1", { compensate: () => undefined });
    return ctx.step("charge", () => chargeCard());
  },
});

function chargeCard(): never {
  throw new NonRetryableError("card declined");
}

describe.skipIf(!haveChromium && process.env.CI !== "true")("the operator's console in a browser", () => {
  let bench: DashboardBench;
  let engine: Engine;
  let server: RunningServer;
  const tabs = new BenchPages(() => bench);

  beforeAll(async () => {
    bench = await startDashboardBench({
      prefix: "cairn-console-",
      artifacts: ARTIFACTS,
      workflows: [greet, fanout, waiter, failing, stamp, trip, ask],
      worker: { pollInterval: 10 },
    });
    ({ engine, server } = bench);
    await engine.start("greet", { customer: "needle-co" }, { runId: "greet-needle", tags: { team: "alpha" } });
    await engine.start("greet", { customer: "other" }, { runId: "greet-other", tags: { team: "beta" } });
    await engine.start("fanout", null, { runId: "fan" });
    for (const n of [1, 2, 3]) await engine.start("waiter", null, { runId: `wait-${n}` });
    for (const n of [101, 202]) await engine.start("failing", { order: n }, { runId: `fail-${n}` });
    await engine.start("stamp", null, { runId: "stamp" });
    await engine.start("trip", null, { runId: "trip" });
    await engine.start("ask", null, { runId: "asking" });
    await waitFor(async () => (await engine.getRun("fan")).status === "completed" && (await engine.getRun("trip")).status === "compensated", {
      timeoutMs: 15_000,
    });
    await waitFor(async () => (await engine.getRun("stamp")).status === "suspended" && (await engine.getRun("asking")).status === "suspended", {
      timeoutMs: 15_000,
    });
  });

  afterAll(async () => {
    await bench?.close();
  });

  afterEach(async () => {
    await tabs.close();
    expect(tabs.errors, "errors thrown in the page").toEqual([]);
  });

  const open = (path: string, width = 1366, bypassCSP = false) => tabs.open(path, width, bypassCSP);

  const rowIds = (p: Page) => p.locator("table.runs tbody tr").evaluateAll((rows) => rows.map((row) => row.getAttribute("data-run-id")));

  it("runs list: total, top-level only, search over input and tags, workflow picker, time range, errors cut where they differ", async () => {
    const p = await open("/ui/runs?top=1");
    const topLevel = (await engine.listRuns({ limit: 1000 })).runs.filter((run) => run.parentRunId === null || run.parentRunId === undefined).length;
    await p
      .locator("[data-run-total]")
      .filter({ hasText: `${topLevel} runs` })
      .waitFor({ timeout: 5000 });
    const shown = await rowIds(p);
    expect(shown).toContain("fan");
    expect(shown.some((id) => id?.startsWith("fan") && id !== "fan")).toBe(false);

    // Search reaches the input and the tags.
    await p.getByLabel("search runs").fill("needle-co");
    await p.getByRole("button", { name: "Search" }).click();
    await p
      .locator("[data-run-total]")
      .filter({ hasText: /^1 run$/ })
      .waitFor({ timeout: 5000 });
    expect(await rowIds(p)).toEqual(["greet-needle"]);
    expect(new URL(p.url()).searchParams.get("q")).toBe("needle-co");
    await p.getByLabel("search runs").fill("team:beta");
    await p.getByRole("button", { name: "Search" }).click();
    await expect.poll(() => rowIds(p)).toEqual(["greet-other"]);

    // The workflow picker lists the store's workflows (greet's children included) and keeps the choice in the URL.
    await p.goto(`${server.url}/ui/runs`);
    await expect
      .poll(() => p.getByLabel("workflow filter").locator("option").allTextContents())
      .toEqual(expect.arrayContaining(["ask", "failing", "fanout", "greet", "stamp", "trip", "waiter"]));
    await p.getByLabel("workflow filter").selectOption("failing");
    await expect.poll(() => new URL(p.url()).searchParams.get("workflow")).toBe("failing");
    await p.locator("[data-run-total]").filter({ hasText: "2 runs" }).waitFor({ timeout: 5000 });
    // Two messages alike up to their order numbers: each row shows where they differ.
    const errors = await p.locator("table.runs td.detail .err").allTextContents();
    expect(errors.sort()).toEqual(["…failed for order 101", "…failed for order 202"]);

    // A time range: nothing was created after tomorrow; the range is in the URL.
    await p.getByLabel("created after").fill(new Date(Date.now() + 86_400_000).toISOString().slice(0, 16));
    await expect.poll(() => new URL(p.url()).searchParams.has("after")).toBe(true);
    await p.locator("[data-run-total]").filter({ hasText: "0 runs" }).waitFor({ timeout: 5000 });
    await p.reload();
    await p.locator("[data-run-total]").filter({ hasText: "0 runs" }).waitFor({ timeout: 5000 });
  });

  it("runs list: bulk cancel of a filtered set and bulk retry of a selection, confirmed with the count and audited", async () => {
    const p = await open("/ui/runs?workflow=waiter");
    await p.locator("[data-run-total]").filter({ hasText: "3 runs" }).waitFor({ timeout: 5000 });
    await p.locator("[data-bulk=cancel]").click();
    const confirm = p.locator("[data-bulk-confirm]");
    await expect.poll(() => confirm.getAttribute("data-bulk-confirm")).toBe("3");
    await confirm.getByRole("button", { name: "Yes, cancel 3 runs" }).click();
    await p.locator("[data-bulk-outcome]").filter({ hasText: "Cancelled 3 runs" }).waitFor({ timeout: 10_000 });
    for (const n of [1, 2, 3]) expect((await engine.getRun(`wait-${n}`)).status).toBe("cancelled");
    const cancels = await engine.store.listAudit({ action: "run.cancel" });
    expect(cancels.map((entry) => entry.target).sort()).toEqual(["wait-1", "wait-2", "wait-3"]);
    expect(cancels.every((entry) => (entry.detail as { bulk?: boolean }).bulk === true)).toBe(true);

    await p.goto(`${server.url}/ui/runs?workflow=failing`);
    await p.getByLabel("select fail-101").check();
    await p.locator("[data-bulk=retry]").click();
    await confirm.getByRole("button", { name: "Yes, retry 1 run" }).click();
    await p.locator("[data-bulk-outcome]").filter({ hasText: "Retried 1 run" }).waitFor({ timeout: 10_000 });
    expect((await engine.store.listAudit({ action: "run.retry" })).map((entry) => entry.target)).toEqual(["fail-101"]);
  });

  it("times: one format with the zone, a UTC/local switch kept across reloads, dates on sleeps, recorded times as times", async () => {
    const p = await open("/ui/runs/stamp");
    await p.locator('li[data-kind="sleep.started"]').waitFor({ timeout: 5000 });
    await p.locator(".zone-toggle").click();
    await expect.poll(() => p.locator(".zone-toggle").getAttribute("data-zone")).toBe("utc");
    await p.reload();
    await expect.poll(() => p.locator(".zone-toggle").getAttribute("data-zone")).toBe("utc");
    const wakeAt = new Date(((await engine.journal("stamp")).find((e) => e.kind === "sleep.started")!.data as { wakeAt: number }).wakeAt);
    const day = wakeAt.toISOString().slice(0, 10);
    const time = wakeAt.toISOString().slice(11, 19);
    // Two days ahead: the date is shown, and the zone.
    await expect.poll(() => p.locator('li[data-kind="sleep.started"] .what').textContent()).toContain(`until ${day} ${time} UTC`);
    const recorded = await engine.journal("stamp");
    const now = recorded.find((e) => e.kind === "value.recorded")!;
    const at = new Date((now.data as { value: Date }).value).toISOString();
    await expect.poll(() => p.locator(`li[data-seq="${now.seq}"] [data-recorded-time]`).textContent()).toBe(`${at.slice(0, 10)} ${at.slice(11, 19)} UTC`);
    // The run's start, in the same format.
    await expect.poll(() => p.locator("body").textContent()).toMatch(/\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC/);
    await p.locator(".zone-toggle").click();
    await expect.poll(() => p.evaluate<string | null>('localStorage.getItem("cairn.timeZone")')).toBe("local");
  });

  it("stack traces: the user's frames first, engine frames folded, a saga's trace shown once", async () => {
    const p = await open("/ui/runs/trip");
    await p.locator('li[data-kind="run.compensated"]').waitFor({ timeout: 5000 });
    const journal = p.locator("ol.timeline");
    // step.failed carries the error; saga.compensating and run.compensated its wrapper: one trace, two references.
    await expect.poll(() => journal.locator("[data-stack], [data-trace-ref]").count()).toBe(3);
    expect(await journal.locator("[data-stack]").count()).toBe(1);
    expect(await journal.locator("[data-trace-ref]").count()).toBe(2);
    await journal.locator("details.err summary").first().click();
    const user = (await journal.locator("[data-user-frames]").textContent())!;
    expect(user.split("\n")[0]).toContain("chargeCard");
    expect(user).not.toMatch(/src\/engine\//);
    const toggle = journal.locator("[data-engine-toggle]");
    expect(await toggle.textContent()).toMatch(/^show \d+ engine frames?$/);
    expect(await journal.locator("[data-engine-frames]").count()).toBe(0);
    await toggle.click();
    expect(await journal.locator("[data-engine-frames]").textContent()).toMatch(/src\/engine\//);
  });

  it("accessibility: axe finds no serious or critical violation on any page; a skip link; focus on the new page's heading", async () => {
    const pages = {
      overview: "/ui/",
      runs: "/ui/runs",
      "run-completed": "/ui/runs/greet-needle",
      "run-failed": "/ui/runs/fail-202",
      "run-waiting": "/ui/runs/stamp",
      "run-human": "/ui/runs/asking",
      "run-saga": "/ui/runs/trip",
      inbox: "/ui/inbox",
      workers: "/ui/workers",
    };
    const found: Record<string, string[]> = {};
    for (const [name, path] of Object.entries(pages)) {
      for (const width of [1366, 800]) {
        const p = await open(path, width, true);
        await p.locator("main h1").first().waitFor({ timeout: 5000 });
        await p.waitForFunction('!document.body.textContent.includes("Loading…")', undefined, { timeout: 1500 }).catch(() => undefined);
        await p.screenshot({ path: join(ARTIFACTS, `${name}-${width}x900.png`), fullPage: true });
        if (width === 1366) {
          await p.addScriptTag({ content: AXE_SOURCE });
          const result = await p.evaluate<{ violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }>("axe.run(document)");
          const violations = result.violations
            .filter((v) => v.impact === "serious" || v.impact === "critical")
            .map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
          if (violations.length) found[name] = violations;
          // The ⏸ glyph renders as a box with Debian's stock fonts: not used.
          expect(await p.locator("body").textContent()).not.toContain("⏸");
        }
        await tabs.close();
      }
    }
    expect(found).toEqual({});

    const p = await open("/ui/");
    // The chosen time range reads as chosen: its white text sits on the accent colour, not on the page's white.
    const chosen = p.locator('[aria-label="time range of failures and spend"] button[aria-pressed="true"]');
    await chosen.waitFor({ timeout: 5000 });
    const colours = await p.evaluate<{ fg: string; bg: string }>(
      `(() => { const s = getComputedStyle(document.querySelector('[aria-label="time range of failures and spend"] button[aria-pressed="true"]')); return { fg: s.color, bg: s.backgroundColor }; })()`,
    );
    expect(colours.fg).toBe("rgb(255, 255, 255)");
    expect(colours.bg).not.toMatch(/^rgba\(0, 0, 0, 0\)$|^rgb\(255, 255, 255\)$|^transparent$/);
    // The app renders after its script loads: Tab before that would focus the empty page.
    await p.locator("main h1").first().waitFor({ timeout: 5000 });
    await p.keyboard.press("Tab");
    expect(await p.evaluate<string>("document.activeElement.textContent")).toBe("Skip to content");
    await p.getByRole("link", { name: "Workers", exact: true }).click();
    await expect.poll(() => p.evaluate<string | null>('document.activeElement.tagName === "H1" ? document.activeElement.textContent : null')).toBe("Workers");
  }, 150_000); // 18 axe scans: about 30 s alone, more beside another test file
});
