// The run page in a real browser (Debian's Chromium via playwright-core) against a real server on a
// SQLite file: child runs linked both ways with their spend rolled up into the parent's, the run's
// costs; a running agent's transcript (prompt, live output inside it); a question's context and
// notes an option requires; the actions fork (with a patch), re-run, journal download and cancel with
// a reason; plans drawn as a DAG. Screenshots at 1366×900 and 800×900 go to test-artifacts/run-page/.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { defineAgent } from "../src/agent/agent.js";
import { ScriptedModel } from "../src/agent/model/scripted.js";
import { planTool } from "../src/agent/plan-tool.js";
import { defineTool } from "../src/agent/tool.js";
import { defineWorkflow } from "../src/engine/define-workflow.js";
import type { Engine } from "../src/engine/engine.js";
import { type RunningServer } from "../src/server/serve.js";
import { waitFor } from "../src/testing/wait-for.js";
import { AXE_SOURCE, BenchPages, haveChromium, startDashboardBench, type DashboardBench } from "./support/dashboard-browser.js";

const ARTIFACTS = join(import.meta.dirname, "..", "test-artifacts", "run-page");
const usage = { inputTokens: 1000, outputTokens: 500 };

/** One priced model call: $0.025. */
const helper = defineAgent({
  name: "helper",
  model: () => new ScriptedModel([{ content: "Helped.", usage }]),
  prices: { scripted: { input: 10, output: 30 } },
  maxTokens: 500,
});

/** Starts two priced agents as child runs: its own journal has no model call. */
const boss = defineWorkflow({
  name: "boss",
  version: "1",
  async run(ctx) {
    const a = await ctx.child(helper, { prompt: "first" }, { name: "first" });
    const b = await ctx.child(helper, { prompt: "second" }, { name: "second" });
    return [a, b].length;
  },
});

/** Streams its answer piece by piece (150 ms apart), only once the test opens the gate. */
let openGate!: () => void;
const gate = new Promise<void>((resolve) => (openGate = resolve));
const LIVE_TEXT =
  "Streaming one word at a time inside the transcript, as the pending assistant message, until the journaled model step replaces it with the whole text.";
const streamer = defineAgent({
  name: "streamer",
  model: () => new ScriptedModel([async () => (await gate, { content: LIVE_TEXT })], { deltaDelayMs: 150 }),
});

const HOSTILE = '<img src=x onerror="window.__owned=1">';

/** Asks with a context and a reject that needs a note. */
const approver = defineWorkflow({
  name: "approver",
  version: "1",
  async run(ctx) {
    const reply = await ctx.askHuman({
      name: "approve",
      question: "Run the lookup?",
      options: ["approve", "reject"],
      requireNote: ["reject"],
      context: { tool: "lookup", arguments: { q: HOSTILE, limit: 3 }, reason: "the model asked twice" },
    });
    return { option: reply.option, message: reply.message };
  },
});

/** Two steps, the second built on the first: a fork that patches the first changes the output. */
const pipeline = defineWorkflow({
  name: "pipeline",
  version: "1",
  async run(ctx, input: { n: number }) {
    const doubled = await ctx.step("first", () => input.n * 2);
    return ctx.step("second", () => doubled + 1);
  },
});

/** Two versions registered: the start form picks one. */
const greetOld = defineWorkflow({ name: "greet", version: "1", run: async (_ctx, input: { who: string }) => `hello ${input.who} (v1)` });
const greetNew = defineWorkflow({ name: "greet", version: "2", run: async (_ctx, input: { who: string }) => `hello ${input.who} (v2)` });

/** Waits for an event that never comes: cancelled with a reason. */
const waiter = defineWorkflow({ name: "waiter", version: "1", run: async (ctx) => ctx.waitForEvent("never") });

const lookup = defineTool({
  name: "lookup",
  description: "Looks a word up.",
  input: z.object({ q: z.string() }),
  effect: "idempotent",
  run: ({ q }) => `result for ${q}`,
});
let boomAttempts = 0;
const boom = defineTool<Record<string, never>, string>({
  name: "boom",
  description: "Always fails.",
  input: z.object({}),
  effect: "idempotent",
  retry: { maxAttempts: 2, initialDelay: "10ms" },
  run: (): string => {
    boomAttempts += 1;
    throw new Error("the index is down");
  },
});
let openSlow!: () => void;
const slowGate = new Promise<void>((resolve) => (openSlow = resolve));
const slow = defineTool({
  name: "slow",
  description: "Waits for the test.",
  input: z.object({}),
  effect: "idempotent",
  run: async () => (await slowGate, "slow done"),
});
const call = (id: string, name: string, input: unknown) => ({ type: "tool_use" as const, id, name, input: input as never });

/** A plan whose second wave has a failing node (its dependent skipped) beside a running one. */
const planner = defineAgent({
  name: "planner",
  model: () =>
    new ScriptedModel([
      {
        content: [
          call("p1", "plan", {
            action: "create",
            nodes: [
              { id: "fetch", tool: "lookup", input: { q: "alpha" }, note: "start here" },
              { id: "index", deps: ["fetch"], tool: "boom", input: {} },
              { id: "publish", deps: ["index"], tool: "lookup", input: { q: "beta" } },
              { id: "wait", deps: ["fetch"], tool: "slow", input: {} },
            ],
          }),
        ],
      },
      { content: "Planned." },
    ]),
  tools: [planTool({ tools: [lookup, boom, slow] })],
});

/** A step that fails twice before it works, then a short sleep: retries and a wait on the waterfall. */
let shakyCalls = 0;
const shaky = defineWorkflow({
  name: "shaky",
  version: "1",
  async run(ctx) {
    const value = await ctx.step(
      "call",
      () => {
        shakyCalls += 1;
        if (shakyCalls < 3) throw new Error(`try ${shakyCalls} failed`);
        return "ok";
      },
      { retry: { maxAttempts: 3, initialDelay: "50ms" } },
    );
    await ctx.sleep("pause", "300ms");
    return value;
  },
});

/** Continues as new once: `hop` → `hop~2`. */
const hop = defineWorkflow({
  name: "hop",
  version: "1",
  async run(ctx, input: { n: number }) {
    return input.n < 1 ? ctx.continueAsNew({ n: input.n + 1 }) : input.n;
  },
});

describe.skipIf(!haveChromium && process.env.CI !== "true")("the run page in a browser", () => {
  let bench: DashboardBench;
  let engine: Engine;
  let server: RunningServer;
  const tabs = new BenchPages(() => bench);

  beforeAll(async () => {
    bench = await startDashboardBench({
      prefix: "cairn-run-page-",
      artifacts: ARTIFACTS,
      workflows: [helper, boss, streamer, approver, pipeline, greetOld, greetNew, waiter, planner, shaky, hop],
      worker: { pollInterval: 10 },
    });
    ({ engine, server } = bench);
    await engine.start(boss, null, { runId: "boss" });
    await waitFor(async () => (await engine.getRun("boss")).status === "completed", { timeoutMs: 20_000 });
  });

  afterAll(async () => {
    await bench?.close();
  });

  afterEach(async () => {
    await tabs.close();
    expect(tabs.errors, "errors thrown in the page").toEqual([]);
  });

  const open = (path: string, width = 1366, bypassCSP = false) => tabs.open(path, width, bypassCSP);

  it("costs: GET /runs/:id/costs?includeChildren=true sums the run's descendants; a bad flag is refused", async () => {
    const own = (await (await fetch(`${server.url}/runs/boss/costs`)).json()) as { model: { costMicros: number }; children?: unknown };
    expect(own.model.costMicros).toBe(0);
    expect(own.children).toBeUndefined();
    const rolled = (await (await fetch(`${server.url}/runs/boss/costs?includeChildren=true`)).json()) as {
      children: {
        runs: number;
        childRunIds: string[];
        truncated: boolean;
        total: { model: { costMicros: number; modelCalls: number }; journal: { entries: number } };
      };
      journal: { entries: number };
    };
    const children = (await engine.store.listRuns({ parentRunId: "boss" })).runs.map((run) => run.runId);
    expect(rolled.children.runs).toBe(2);
    expect([...rolled.children.childRunIds].sort()).toEqual([...children].sort());
    expect(rolled.children.truncated).toBe(false);
    expect(rolled.children.total.model).toMatchObject({ costMicros: 50_000, modelCalls: 2 });
    let entries = rolled.journal.entries;
    for (const child of children) entries += (await engine.journal(child)).length;
    expect(rolled.children.total.journal.entries).toBe(entries);
    const bad = await fetch(`${server.url}/runs/boss/costs?includeChildren=yes`);
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain("includeChildren");
  });

  it("children: child.started links to the child, the child links back, the parent's spend includes its children's", async () => {
    const p = await open("/ui/runs/boss");
    const children = (await engine.store.listRuns({ parentRunId: "boss" })).runs.map((run) => run.runId);
    await expect.poll(() => p.locator('[data-kind="child.started"] a[data-child-run]').count(), { timeout: 5000 }).toBe(2);
    // The parent's own calls cost nothing; with its two children, $0.05.
    await expect.poll(() => p.locator('[data-fact="cost"]').textContent()).toBe("$0");
    await expect.poll(() => p.locator('[data-fact="cost-with-children"]').textContent()).toContain("$0.05 with children");
    const table = p.locator("table[data-costs]");
    expect(await table.locator('tr[data-cost="cost"] td[data-own]').textContent()).toBe("$0");
    expect(await table.locator('tr[data-cost="cost"] td[data-rolled]').textContent()).toBe("$0.05");
    expect(await table.locator('tr[data-cost="model-calls"] td[data-rolled]').textContent()).toBe("2");
    expect(await table.locator("thead").textContent()).toContain("with 2 child runs");
    // Follow the first child.started link: the child's page, which links back to its parent.
    const first = p.locator('[data-kind="child.started"] a[data-child-run]').first();
    const childId = (await first.getAttribute("data-child-run"))!;
    expect(children).toContain(childId);
    await first.click();
    await expect.poll(() => p.locator("main h1").first().textContent()).toBe(childId);
    expect(new URL(p.url()).pathname).toBe(`/ui/runs/${encodeURIComponent(childId)}`);
    const parent = p.locator(".fact", { hasText: "parent" }).getByRole("link", { name: "boss" });
    await parent.waitFor({ timeout: 5000 });
    await p.locator('[data-fact="cost"]').filter({ hasText: "$0.025" }).waitFor({ timeout: 5000 });
    await parent.click();
    await expect.poll(() => p.locator("main h1").first().textContent()).toBe("boss");
  });

  it("continue as new: a run links to the run that continues it, which links back", async () => {
    expect(await (await engine.start(hop, { n: 0 }, { runId: "hop" })).result({ timeoutMs: 10_000 })).toBe(1);
    const p = await open("/ui/runs/hop");
    const next = p.locator(".fact", { hasText: "continued as" }).getByRole("link", { name: "hop~2" });
    await next.waitFor({ timeout: 5000 });
    await next.click();
    await expect.poll(() => p.locator("main h1").first().textContent()).toBe("hop~2");
    await p.locator(".fact", { hasText: "continues" }).getByRole("link", { name: "hop", exact: true }).click();
    await expect.poll(() => p.locator("main h1").first().textContent()).toBe("hop");
  });

  it("a running agent's transcript starts with the prompt, and its live output is the transcript's pending message", async () => {
    await engine.start(streamer, { prompt: "Please stream into the transcript." }, { runId: "agent-live" });
    const p = await open("/ui/runs/agent-live");
    const transcript = p.locator('ol[aria-label="transcript"]');
    // Before any loop state is journaled: the prompt, from the run's input.
    await expect.poll(() => transcript.locator("> li").first().getAttribute("data-role"), { timeout: 10_000 }).toBe("user");
    expect(await transcript.locator("> li").first().textContent()).toContain("Please stream into the transcript.");
    expect((await engine.getRun("agent-live")).status).toBe("running");
    openGate();
    const live = transcript.locator('> li[aria-label="live model output"]');
    // One look at the page while the text is partial: the pending assistant message, after the prompt,
    // inside the transcript, and no live box anywhere else.
    type Look = { roles: (string | null)[]; pending: string | null; text: string; boxes: number };
    let seen: Look | undefined;
    await expect
      .poll(
        async () => {
          const look = await p.evaluate<Look>(`(() => {
            const items = [...document.querySelectorAll('ol[aria-label="transcript"] > li')];
            const live = items.find((item) => item.getAttribute("aria-label") === "live model output");
            return {
              roles: items.map((item) => item.getAttribute("data-role")),
              pending: live ? live.getAttribute("data-pending") : null,
              text: live?.querySelector('[data-live-kind="text"]')?.textContent ?? "",
              boxes: document.querySelectorAll('[aria-label="live model output"]').length,
            };
          })()`);
          // Part of the text (the pieces so far), not yet the whole of it.
          if (look.text.length > 0 && look.text.length < LIVE_TEXT.length && LIVE_TEXT.includes(look.text.trim())) seen = look;
          return seen !== undefined;
        },
        { timeout: 15_000, interval: 50 },
      )
      .toBe(true);
    expect(seen).toMatchObject({ roles: ["user", "assistant"], pending: "", boxes: 1 });
    await expect.poll(() => p.locator("header [data-status]").getAttribute("data-status"), { timeout: 15_000 }).toBe("completed");
    await expect.poll(() => live.count()).toBe(0);
    expect(await transcript.locator("> li").evaluateAll((items) => items.map((item) => item.getAttribute("data-role")))).toEqual(["user", "assistant"]);
    expect(await transcript.locator("> li").nth(1).textContent()).toContain(LIVE_TEXT);
  });

  it("a question shows its context as readable fields (escaped), and an option that needs a note says so and waits for one", async () => {
    await engine.start(approver, null, { runId: "approving" });
    await waitFor(async () => (await engine.getRun("approving")).status === "suspended", { timeoutMs: 10_000 });
    // The API refuses the answer without its note.
    const refused = await fetch(`${server.url}/human-requests/${encodeURIComponent("approving:approve#0")}/answer`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ action: "answer", option: "reject" }),
    });
    expect(refused.status).toBe(422);
    expect(await refused.text()).toContain("needs a note");
    const listed = await engine.listHumanRequests({ runId: "approving" });
    expect(listed[0]!.status).toBe("pending");

    const p = await open("/ui/runs/approving");
    const card = p.locator(".card.question");
    const context = card.locator("[data-context]");
    await context.waitFor({ timeout: 5000 });
    expect(await context.locator('[data-context-key="tool"] dd').textContent()).toBe("lookup");
    expect(await context.locator('[data-context-key="reason"] dd').textContent()).toBe("the model asked twice");
    expect(await context.locator('[data-context-key="arguments"] [data-context-key="q"] dd').textContent()).toBe(HOSTILE);
    expect(await context.locator('[data-context-key="arguments"] [data-context-key="limit"] dd').textContent()).toBe("3");
    // Not JSON text, and the markup in a value stays text.
    expect(await context.textContent()).not.toContain("{");
    expect(await card.locator("img").count()).toBe(0);
    expect(await p.evaluate("window.__owned")).toBeUndefined();

    const note = card.getByLabel("note");
    expect(await note.getAttribute("placeholder")).toBe("note (required for reject)");
    await card.getByRole("button", { name: "reject" }).click();
    await card.locator('[data-note-missing="reject"]').waitFor({ timeout: 5000 });
    expect(await card.locator("[data-note-missing]").textContent()).toContain("“reject” requires a note");
    expect(await note.getAttribute("aria-invalid")).toBe("true");
    expect(await p.evaluate<boolean>("document.activeElement?.getAttribute('aria-label') === 'note'")).toBe(true);
    expect((await engine.listHumanRequests({ runId: "approving" }))[0]!.status).toBe("pending");
    await note.fill("too risky today");
    expect(await card.locator("[data-note-missing]").count()).toBe(0);
    await card.getByRole("button", { name: "reject" }).click();
    const result = (await engine.result("approving", { timeoutMs: 10_000 })) as { option: string; message: string };
    expect(result).toEqual({ option: "reject", message: "too risky today" });
  });

  it("actions: the start form starts the version chosen; re-run with an edited input; each audited", async () => {
    const p = await open("/ui/runs");
    await p.locator("details.start-run-box summary").click();
    const picker = p.locator('form[aria-label="start a run"]').getByLabel("workflow", { exact: true });
    await expect.poll(() => picker.locator("option").allTextContents()).toEqual(expect.arrayContaining(["greet@1", "greet@2"]));
    await picker.selectOption("greet@1");
    await p.getByLabel("run input").fill('{"who":"old"}');
    await p.getByLabel("run id").fill("greet-v1");
    await p.getByRole("button", { name: "Start", exact: true }).click();
    await expect.poll(() => new URL(p.url()).pathname).toBe("/ui/runs/greet-v1");
    expect((await engine.result("greet-v1", { timeoutMs: 10_000 })) as string).toBe("hello old (v1)");
    expect((await engine.getRun("greet-v1")).version).toBe("1");
    const started = (await engine.store.listAudit({ action: "run.start" })).find((entry) => entry.target === "greet-v1")!;
    expect(started.detail).toMatchObject({ workflow: "greet", version: "1" });

    // Re-run it, input edited: a new run of the same version.
    await p.getByRole("button", { name: "Re-run…" }).click();
    const rerun = p.locator('form[aria-label="re-run"]');
    expect(JSON.parse(await rerun.getByLabel("re-run input").inputValue())).toEqual({ who: "old" });
    await expect.poll(() => rerun.getByRole("button").textContent()).toBe("Start with the same input");
    await rerun.getByLabel("re-run input").fill('{"who":"again"}');
    await rerun.getByRole("button", { name: "Start with the edited input" }).click();
    await expect.poll(() => new URL(p.url()).pathname).not.toBe("/ui/runs/greet-v1");
    const again = decodeURIComponent(new URL(p.url()).pathname.split("/").at(-1)!);
    expect((await engine.result(again, { timeoutMs: 10_000 })) as string).toBe("hello again (v1)");
    expect((await engine.getRun(again)).version).toBe("1");
    expect((await engine.store.listAudit({ action: "run.start" })).some((entry) => entry.target === again)).toBe(true);
    // An unknown version is refused by the API, naming what is registered.
    const bad = await fetch(`${server.url}/runs`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ workflow: "greet", version: "9" }),
    });
    expect(bad.status).toBe(422);
    expect(await bad.text()).toContain("greet@1");
  });

  it("actions: fork with a patched step result, journal download, cancel with a reason; each audited", async () => {
    await engine.start(pipeline, { n: 5 }, { runId: "pipe" });
    expect(await engine.result("pipe", { timeoutMs: 10_000 })).toBe(11);
    const first = (await engine.journal("pipe")).find((entry) => entry.kind === "step.completed" && entry.opKey?.startsWith("first"))!;

    const p = await open("/ui/runs/pipe");
    await p.locator('[data-kind="run.completed"]').waitFor({ timeout: 5000 });
    await p.getByRole("button", { name: "Fork…" }).click();
    const fork = p.locator('form[aria-label="fork the run"]');
    await fork.getByLabel("fork at seq").fill(String(first.seq));
    await fork.getByLabel("patch step").selectOption(String(first.seq));
    expect(JSON.parse(await fork.getByLabel("patched result").inputValue())).toBe(10);
    await fork.getByLabel("patched result").fill("41");
    await fork.getByRole("button", { name: "Fork", exact: true }).click();
    await expect.poll(() => new URL(p.url()).pathname).not.toBe("/ui/runs/pipe");
    const forked = decodeURIComponent(new URL(p.url()).pathname.split("/").at(-1)!);
    expect(await engine.result(forked, { timeoutMs: 10_000 })).toBe(42);
    const forkAudit = (await engine.store.listAudit({ action: "run.fork" })).find((entry) => entry.target === forked)!;
    expect(forkAudit.detail).toMatchObject({ from: "pipe", atSeq: first.seq, patched: first.seq });

    // The journal, downloaded: the export of the run, audited.
    await p.goto(`${server.url}/ui/runs/pipe`);
    await p.locator('[data-kind="run.completed"]').waitFor({ timeout: 5000 });
    const [download] = await Promise.all([p.waitForEvent("download"), p.getByRole("button", { name: "Download journal" }).click()]);
    expect(download.suggestedFilename()).toBe("pipe.journal.json");
    const exported = JSON.parse(readFileSync((await download.path())!, "utf8")) as { run: { runId: string }; journal: unknown[] };
    expect(exported.run.runId).toBe("pipe");
    expect(exported.journal).toHaveLength((await engine.journal("pipe")).length);
    expect((await engine.store.listAudit({ action: "run.export" })).map((entry) => entry.target)).toContain("pipe");

    // Cancel with a reason: journaled and audited with it.
    await engine.start(waiter, null, { runId: "waiting" });
    await waitFor(async () => (await engine.getRun("waiting")).status === "suspended", { timeoutMs: 10_000 });
    await p.goto(`${server.url}/ui/runs/waiting`);
    await p.getByRole("button", { name: "Cancel…" }).click();
    await p.getByLabel("cancel reason").fill("customer withdrew the order");
    await p.getByRole("button", { name: "Yes, cancel the run" }).click();
    await expect.poll(async () => (await engine.getRun("waiting")).status, { timeout: 10_000 }).toBe("cancelled");
    const cancelled = (await engine.store.listAudit({ action: "run.cancel" })).find((entry) => entry.target === "waiting")!;
    expect(cancelled.detail).toEqual({ reason: "customer withdrew the order" });
    await expect.poll(() => p.locator("header [data-status]").getAttribute("data-status")).toBe("cancelled");
  });

  it("plans: a DAG with each node's state, attempts, duration and note; a skipped node names the failed one; the running node highlighted", async () => {
    await engine.start(planner, { prompt: "Plan it." }, { runId: "planning" });
    await waitFor(
      async () => boomAttempts === 2 && (await engine.journal("planning")).some((e) => e.kind === "step.started" && e.opKey?.includes("plan-agent:wait")),
      {
        timeoutMs: 15_000,
      },
    );
    const p = await open("/ui/runs/planning");
    const graph = p.locator('svg[data-plan-graph="agent"]');
    const node = (id: string) => graph.locator(`[data-dag-node="${id}"]`);
    await expect.poll(() => node("index").getAttribute("data-node-status"), { timeout: 10_000 }).toBe("failed");
    expect(await node("fetch").getAttribute("data-node-status")).toBe("done");
    expect(await node("publish").getAttribute("data-node-status")).toBe("skipped");
    expect(await node("wait").getAttribute("data-node-status")).toBe("running");
    // Attempts and durations; the note; why a node was skipped; the failed node's error.
    expect(await node("fetch").locator("[data-dag-timing]").textContent()).toMatch(/^1 attempt · \d+ ms$/);
    expect(await node("index").locator("[data-dag-timing]").textContent()).toMatch(/^2 attempts · /);
    expect(await node("fetch").locator("[data-dag-detail]").textContent()).toBe("note: start here");
    expect(await node("publish").locator("[data-dag-detail]").textContent()).toBe("skipped: index failed");
    expect(await node("index").locator("[data-dag-detail]").textContent()).toContain("error: the index is down");
    expect(await node("wait").locator("[data-dag-timing]").textContent()).toContain("so far");
    // Edges from each dependency; the one that skipped a node drawn as blocked.
    expect(await graph.locator("[data-edge]").evaluateAll((edges) => edges.map((e) => e.getAttribute("data-edge")).sort())).toEqual([
      "fetch->index",
      "fetch->wait",
      "index->publish",
    ]);
    expect(await graph.locator('[data-edge="index->publish"]').getAttribute("class")).toContain("plan-edge-blocked");
    // The running node stands out: a thicker, blue border.
    const stroke = (id: string) =>
      node(id)
        .locator("rect")
        .evaluate((rect) => (globalThis as unknown as { getComputedStyle(e: unknown): { strokeWidth: string } }).getComputedStyle(rect).strokeWidth);
    expect(await stroke("wait")).toBe("3px");
    expect(await stroke("fetch")).not.toBe("3px");
    // Columns by depth: a node sits right of its dependencies.
    const x = async (id: string) => Math.round((await node(id).boundingBox())!.x / 10); // to 10 px: borders differ
    expect(await x("index")).toBeGreaterThan(await x("fetch"));
    expect(await x("publish")).toBeGreaterThan(await x("index"));
    expect(await x("wait")).toBe(await x("index"));
    for (const width of [1366, 800]) {
      await p.setViewportSize({ width, height: 900 });
      await p.screenshot({ path: join(ARTIFACTS, `plan-running-${width}x900.png`), fullPage: true });
    }
    openSlow();
    await expect.poll(() => node("wait").getAttribute("data-node-status"), { timeout: 15_000 }).toBe("done");
  });

  it("accessibility: axe finds no serious or critical violation on the run pages added to (agent, plan, question, parent, actions open)", async () => {
    const pages: Record<string, { path: string; open?: string }> = {
      "run-agent": { path: "/ui/runs/agent-live" },
      "run-plan": { path: "/ui/runs/planning" },
      "run-question": { path: "/ui/runs/approving" },
      "run-parent": { path: "/ui/runs/boss" },
      "run-fork-form": { path: "/ui/runs/pipe", open: "Fork…" },
      "run-rerun-form": { path: "/ui/runs/pipe", open: "Re-run…" },
    };
    // The question page needs a pending question: ask again.
    await engine.start(approver, null, { runId: "approving-2" });
    await waitFor(async () => (await engine.getRun("approving-2")).status === "suspended", { timeoutMs: 10_000 });
    pages["run-question"] = { path: "/ui/runs/approving-2" };
    const found: Record<string, string[]> = {};
    for (const [name, { path, open: button }] of Object.entries(pages)) {
      const p = await open(path, 1366, true);
      await p.locator("main h1").first().waitFor({ timeout: 10_000 });
      await p.locator("ol.timeline li").first().waitFor({ timeout: 10_000 });
      if (button) await p.getByRole("button", { name: button }).click();
      await p.addScriptTag({ content: AXE_SOURCE });
      const result = await p.evaluate<{ violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }>("axe.run(document)");
      const violations = result.violations
        .filter((v) => v.impact === "serious" || v.impact === "critical")
        .map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
      if (violations.length) found[name] = violations;
      for (const width of [1366, 800]) {
        await p.setViewportSize({ width, height: 900 });
        await p.screenshot({ path: join(ARTIFACTS, `${name}-${width}x900.png`), fullPage: true });
        // No sideways scroll of the page (a wide graph scrolls in its own box).
        const wide = await p.evaluate<string[]>(`[...document.querySelectorAll("body *")]
          .filter((el) => el.getBoundingClientRect().right > document.documentElement.clientWidth + 0.5)
          .map((el) => el.tagName + "." + el.className + " " + Math.round(el.getBoundingClientRect().right))
          .slice(0, 5)`);
        expect(wide, `${name} at ${width}px: elements past the right edge`).toEqual([]);
      }
      await tabs.close();
    }
    expect(found).toEqual({});
  }, 240_000);

  it("waterfall: each op a bar on the run's time axis, failed attempts, retry waits and sleeps visible", async () => {
    await engine.start(shaky, null, { runId: "shaky" });
    expect(await engine.result("shaky", { timeoutMs: 15_000 })).toBe("ok");
    const p = await open("/ui/runs/shaky", 1366, true);
    await p.locator('[data-kind="run.completed"]').waitFor({ timeout: 10_000 });
    await p.locator("[data-waterfall-box] summary").click();
    const step = p.locator('[data-wf-op="call#0"] [data-wf-seg]');
    await expect
      .poll(() => step.evaluateAll((segs) => segs.map((s) => s.getAttribute("data-wf-seg"))))
      .toEqual(["failed", "retry-wait", "failed", "retry-wait", "attempt"]);
    expect(await p.locator('[data-wf-op="pause#0"] [data-wf-seg]').evaluateAll((segs) => segs.map((s) => s.getAttribute("data-wf-seg")))).toEqual(["wait"]);
    // On one axis: the sleep starts after the step's last attempt, and lasts about 300 ms of the run.
    const box = async (selector: string) => (await p.locator(selector).boundingBox())!;
    const lastAttempt = await box('[data-wf-op="call#0"] [data-wf-seg="attempt"]');
    const sleep = await box('[data-wf-op="pause#0"] [data-wf-seg="wait"]');
    expect(sleep.x).toBeGreaterThanOrEqual(lastAttempt.x);
    expect(await p.locator('[data-wf-op="pause#0"] [data-wf-seg="wait"]').getAttribute("title")).toMatch(/^waits for a sleep: \d+ ms$/);
    for (const width of [1366, 800]) {
      await p.setViewportSize({ width, height: 900 });
      await p.screenshot({ path: join(ARTIFACTS, `waterfall-${width}x900.png`), fullPage: true });
    }
    await p.addScriptTag({ content: AXE_SOURCE });
    const result = await p.evaluate<{ violations: { id: string; impact: string }[] }>("axe.run(document)");
    expect(result.violations.filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => v.id)).toEqual([]);
  });
});
