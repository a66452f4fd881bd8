// The dashboard's agent views in a real browser (Debian's Chromium, driven by playwright-core) against
// a real server on a SQLite file running a real agent (ScriptedModel, tools, a plan, a budget): the
// transcript, the budget panel with its gauge against the limits, and the plan tree.
// Screenshots go to test-artifacts/dashboard/.
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { defineAgent, type AgentResult } from "../src/agent/agent.js";
import { ScriptedModel } from "../src/agent/model/scripted.js";
import { planTool } from "../src/agent/plan-tool.js";
import { defineTool } from "../src/agent/tool.js";
import type { Engine, Worker } from "../src/engine/engine.js";
import { BenchPages, haveChromium, startDashboardBench, type DashboardBench } from "./support/dashboard-browser.js";

const ARTIFACTS = join(import.meta.dirname, "..", "test-artifacts", "dashboard");

const lookup = defineTool({
  name: "lookup",
  description: "Looks a word up.",
  input: z.object({ q: z.string() }),
  effect: "idempotent",
  run: ({ q }) => `result for ${q}`,
});

const call = (id: string, name: string, input: unknown) => ({ type: "tool_use" as const, id, name, input: input as never });
const usage = { inputTokens: 1000, outputTokens: 500 };

/** Three priced model calls: create and run a plan, call a tool, answer. */
const researcher = defineAgent({
  name: "researcher",
  model: () =>
    new ScriptedModel([
      {
        content: [
          call("c1", "plan", {
            action: "create",
            nodes: [
              { id: "first", tool: "lookup", input: { q: "alpha" } },
              { id: "second", deps: ["first"], tool: "lookup", input: { q: "beta" } },
            ],
          }),
        ],
        usage,
      },
      { content: [{ type: "text", text: "One more look." }, call("c2", "lookup", { q: "gamma" })], usage },
      { content: "All done: alpha, beta, gamma.", usage },
    ]),
  tools: [planTool({ tools: [lookup] }), lookup],
  prices: { scripted: { input: 10, output: 30 } }, // USD per million tokens: $0.025 a call
  maxTokens: 500,
  budget: { maxCostUsd: 0.1, maxTokens: { total: 10_000 }, maxSteps: 10, maxToolCalls: 5 },
});

/** Thinks, answers and calls a tool, streamed piece by piece (150 ms apart), only once the test opens the gate. */
let openGate!: () => void;
const gate = new Promise<void>((resolve) => (openGate = resolve));
const LIVE_THINKING = "The user wants a streamed answer.";
const LIVE_TEXT = "Streaming one word at a time until the journal takes over.";
const LIVE_QUERY = "streaming words one at a time";
const streamer = defineAgent({
  name: "streamer",
  model: () =>
    new ScriptedModel(
      [
        async () => (
          await gate,
          {
            content: [
              { type: "thinking" as const, thinking: LIVE_THINKING, signature: "sig" },
              { type: "text" as const, text: LIVE_TEXT },
              call("s1", "lookup", { q: LIVE_QUERY }),
            ],
          }
        ),
        { content: "Done streaming." },
      ],
      { deltaDelayMs: 150 },
    ),
  tools: [lookup],
});

/** A model without a price: it runs (no cost limit), its cost is unknown, not $0. */
const unpriced = defineAgent({
  name: "unpriced",
  model: () => new ScriptedModel([{ content: "Answered by a local model.", usage }], { modelId: "local-llm" }),
});

/** Priced; its first send hangs until the worker stops without draining (as if it died mid-call), the second answers. */
let flakySends = 0;
const flaky = defineAgent({
  name: "flaky",
  model: () =>
    new ScriptedModel([
      async (request) => {
        if (flakySends++ === 0)
          await new Promise((_, reject) => request.signal?.addEventListener("abort", () => reject(new Error("the worker stopped mid-call")), { once: true }));
        return { content: "Answered on the second send.", usage };
      },
    ]),
  prices: { scripted: { input: 10, output: 30 } },
  maxTokens: 500,
});

describe.skipIf(!haveChromium && process.env.CI !== "true")("dashboard agent views in a browser", () => {
  let bench: DashboardBench;
  let engine: Engine;
  let worker: Worker;
  const tabs = new BenchPages(() => bench);

  beforeAll(async () => {
    bench = await startDashboardBench({
      prefix: "cairn-dashboard-agent-",
      artifacts: ARTIFACTS,
      workflows: [researcher, streamer, unpriced, flaky],
      worker: { pollInterval: 10, leaseMs: 1000 },
    });
    ({ engine, worker } = bench);
  });

  afterAll(async () => {
    await bench?.close();
  });

  afterEach(async (context) => {
    await tabs.page
      ?.screenshot({ path: join(ARTIFACTS, `agent-${context.task.name.replace(/[^a-z0-9]+/gi, "-").slice(0, 80)}.png`), fullPage: true })
      .catch(() => undefined);
    await tabs.close();
    expect(tabs.errors, "errors thrown in the page").toEqual([]);
  });

  const open = (path: string) => tabs.open(path, 1360);

  it("shows an agent run's transcript, its budget against the limits, and its plan tree", async () => {
    const run = await engine.start(researcher, { prompt: "Look up alpha, beta and gamma." }, { runId: "agent-1" });
    const result = (await run.result({ timeoutMs: 20_000 })) as AgentResult;
    expect(result.text).toBe("All done: alpha, beta, gamma.");
    expect(result.totals).toMatchObject({ steps: 3, costMicros: 75_000, toolCalls: 2 });

    const page = await open("/ui/runs/agent-1");
    await expect.poll(() => page.locator("header [data-status]").getAttribute("data-status")).toBe("completed");

    // The transcript: the prompt, three model turns and the tool results between them, in order.
    const transcript = page.locator('ol[aria-label="transcript"] > li');
    await expect
      .poll(() => transcript.evaluateAll((items) => items.map((item) => item.getAttribute("data-role"))))
      .toEqual(["user", "assistant", "tool", "assistant", "tool", "assistant"]);
    expect(await transcript.nth(0).textContent()).toContain("Look up alpha, beta and gamma.");
    expect(await page.locator('[data-tool-call="c1"]').textContent()).toContain("plan");
    expect(await page.locator('[data-tool-call="c2"]').textContent()).toContain("lookup");
    expect(await page.locator('[data-tool-call="c2"]').textContent()).toContain("gamma");
    expect(await page.locator('[data-tool-result="c2"]').textContent()).toContain("result for gamma");
    expect(await transcript.nth(3).textContent()).toContain("One more look.");
    expect(await transcript.nth(5).textContent()).toContain("All done: alpha, beta, gamma.");

    // The budget panel: totals folded from the journal.
    const budget = page.locator('[aria-label="budget"]');
    const fact = (label: string) => budget.locator(".fact", { hasText: label }).locator(".fact-value").textContent();
    expect(await fact("cost")).toBe("$0.075"); // 75 000 micro-dollars: sub-cent amounts are shown
    expect(await fact("model calls")).toBe("3");
    expect(await fact("tool calls")).toBe("2");
    expect(await fact("input tokens")).toBe("3000");
    expect(await fact("output tokens")).toBe("1500");

    // The gauge: spend against each limit the budget set, from the limits journaled with the manifest.
    const gauge = (key: string) => page.locator(`[aria-label="budget gauge"] [data-gauge="${key}"]`);
    expect(await gauge("cost").getAttribute("aria-valuenow")).toBe("75000");
    expect(await gauge("cost").getAttribute("aria-valuemax")).toBe("100000");
    expect(await gauge("cost").textContent()).toContain("$0.075 / $0.10 (75%)");
    expect(await gauge("cost").getAttribute("class")).toContain("gauge-ok");
    expect(await gauge("tokens-total").textContent()).toContain("4,500 / 10,000 (45%)");
    expect(await gauge("steps").textContent()).toContain("3 / 10 (30%)");
    expect(await gauge("tool-calls").textContent()).toContain("2 / 5 (40%)");
    const width = await gauge("cost")
      .locator(".gauge-fill")
      .evaluate((el) => (el as unknown as { style: { width: string } }).style.width);
    expect(width).toBe("75%");

    // The plan tree: both nodes done, the second after the first, with their results.
    const plan = page.locator('[data-plan="agent"]');
    await expect.poll(() => plan.count()).toBe(1);
    expect(await plan.locator('[data-node="first"]').getAttribute("data-node-status")).toBe("done");
    expect(await plan.locator('[data-node="second"]').getAttribute("data-node-status")).toBe("done");
    expect(await plan.locator('[data-node="second"]').textContent()).toContain("after first");
    expect(await plan.locator('[data-node="first"]').textContent()).toContain("result for alpha");
  });

  it("colours the gauge when spend nears the limit: a tighter budget passed down by a parent", async () => {
    // limits.maxCostMicros tightens the agent's own $0.10 to $0.08: three calls spend $0.075, 94 %.
    const run = await engine.start(researcher, { prompt: "Again.", limits: { maxCostMicros: 80_000 } }, { runId: "agent-2" });
    await run.result({ timeoutMs: 20_000 });
    const page = await open("/ui/runs/agent-2");
    const cost = page.locator('[aria-label="budget gauge"] [data-gauge="cost"]');
    await expect.poll(() => cost.getAttribute("aria-valuemax")).toBe("80000");
    expect(await cost.getAttribute("class")).toContain("gauge-near");
    expect(await cost.textContent()).toContain("(94%)");
  });

  it("shows a model call's thinking, text and tool-call arguments live as they stream, then the journaled turn replaces them", async () => {
    await engine.start(streamer, { prompt: "Stream please." }, { runId: "agent-live" });
    const page = await open("/ui/runs/agent-live");
    await expect.poll(() => page.locator('[data-kind="run.created"]').count()).toBe(1);
    openGate();
    const live = page.locator('[aria-label="live model output"]');
    // Partial text: some words shown, not yet all of them.
    await expect
      .poll(
        async () => {
          const text = (await live.count()) > 0 ? ((await live.locator(".msg-text").textContent()) ?? "") : "";
          return text.startsWith("Streaming one") && text.length < LIVE_TEXT.length;
        },
        { timeout: 15_000, interval: 50 },
      ) // the thinking streams first (about 1 s), then the text for about 1.6 s
      .toBe(true);
    expect(await live.getAttribute("data-live-op")).toBe("turn#0/0/model#0");
    // The thinking streamed before the text, whole by now, shown apart from it.
    expect(await live.locator('[data-live-kind="thinking"]').textContent()).toContain(LIVE_THINKING);
    expect(await live.locator('[data-live-kind="text"]').count()).toBe(1);
    // Then the tool call's arguments, growing piece by piece under its id and name, before the step is journaled.
    const args = live.locator('[data-live-tool-call="s1"]');
    await expect
      .poll(
        async () => {
          const text = (await args.count()) > 0 ? ((await args.textContent()) ?? "") : "";
          return text.includes("lookup") && text.includes('{"q":"str') && !text.includes(`${LIVE_QUERY}"}`);
        },
        { timeout: 15_000, interval: 50 },
      )
      .toBe(true);
    // Then the journaled model step: the live box goes, the transcript has the whole text and the call.
    await expect.poll(() => page.locator("header [data-status]").getAttribute("data-status"), { timeout: 15_000 }).toBe("completed");
    await expect.poll(() => live.count()).toBe(0);
    await expect.poll(() => page.locator('ol[aria-label="transcript"]').textContent()).toContain(LIVE_TEXT);
    expect(await page.locator('ol[aria-label="transcript"] [data-tool-call="s1"]').textContent()).toContain(LIVE_QUERY);
  });

  it("shows an unpriced model's cost as unknown, not $0", async () => {
    await (await engine.start(unpriced, { prompt: "Hello?" }, { runId: "agent-unpriced" })).result({ timeoutMs: 20_000 });
    const page = await open("/ui/runs/agent-unpriced");
    const budget = page.locator('[aria-label="budget"]');
    const fact = (label: string) => budget.locator(".fact", { hasText: label }).locator(".fact-value").textContent();
    await expect.poll(() => fact("unpriced calls")).toBe("1");
    expect(await fact("cost")).toBe("$0 + unknown");
    expect(await budget.locator(".fact", { hasText: "cost" }).first().getAttribute("title")).toContain("unknown");
    expect(await fact("possibly billed")).toBe("$0");
  });

  it("counts a send cut short by a stopped worker as possibly billed, apart from the cost", async () => {
    await engine.start(flaky, { prompt: "Try twice." }, { runId: "agent-flaky" });
    await expect.poll(() => flakySends, { timeout: 10_000 }).toBe(1);
    // The worker stops without draining: the model call is abandoned with its intent journaled and no response.
    await worker.stop({ drain: false });
    worker = engine.startWorker({ pollInterval: 10, leaseMs: 1000 });
    await engine.result("agent-flaky", { timeoutMs: 20_000 });
    expect(flakySends).toBe(2);
    const page = await open("/ui/runs/agent-flaky");
    const budget = page.locator('[aria-label="budget"]');
    const fact = (label: string) => budget.locator(".fact", { hasText: label }).locator(".fact-value").textContent();
    await expect.poll(() => fact("model calls")).toBe("1");
    expect(await fact("cost")).toBe("$0.025");
    // The first send's estimate (what the intent journaled) is shown as possibly billed.
    const intent = (await engine.journal("agent-flaky")).find((e) => e.kind === "step.started" && e.opKey?.endsWith("/model#0"))!;
    const estimate = (intent.data as { intent: { estimatedCostMicros: number } }).intent.estimatedCostMicros;
    expect(estimate).toBeGreaterThan(0);
    const text = await fact("possibly billed");
    expect(text).not.toBe("$0");
    expect(Number(text!.slice(1))).toBeCloseTo(estimate / 1e6, 3);
    expect(await budget.locator(".fact", { hasText: "possibly billed" }).getAttribute("title")).toContain("may have billed");
  });
});
