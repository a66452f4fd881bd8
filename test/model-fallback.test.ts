// Fallback models through the real SDKs against the local provider server: the primary (OpenAI
// Responses, `openai` SDK) is down with 500s, the fallback (Anthropic Messages, `@anthropic-ai/sdk`)
// answers. The server's ledger counts the requests each model got; the journal says which model
// answered and what the call cost, and a fresh engine that resumes the run sends nothing it already has.
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { defineAgent, type AgentResult } from "../src/agent/agent.js";
import { anthropicModel } from "../src/agent/model/anthropic.js";
import { openaiModel } from "../src/agent/model/openai.js";
import { defineTool } from "../src/agent/tool.js";
import { agentRunView } from "../src/agent/transcript-view.js";
import { transcriptLines } from "../src/cli/agent-format.js";
import { readJournal } from "../src/cli/follow.js";
import { createEngine } from "../src/engine/create-engine.js";
import { silentLogger } from "../src/engine/logger.js";
import { waitFor } from "../src/testing/wait-for.js";
import { onCleanup, storeUrl, testEngine } from "./support/engines.js";
import { ProviderServer, type LedgerEntry, type ProviderStep } from "./support/provider-server/index.mjs";

let server: ProviderServer;
/** What the primary (gpt-a on /v1/responses) answers; the fallback (claude-b on /v1/messages) follows `fallbackAnswers`. */
let primary: () => ProviderStep;
let fallbackAnswers: ProviderStep[];
beforeAll(async () => {
  server = await new ProviderServer({
    respond: (entry) => (entry.format === "responses" ? primary() : (fallbackAnswers.shift() ?? { status: 500, message: "fallback script ran out" })),
  }).start();
});
afterAll(() => server.close());
beforeEach(() => {
  server.queue.length = 0;
  primary = () => ({ status: 500, message: "primary is down" });
  fallbackAnswers = [];
});

const primaryModel = () => openaiModel({ model: "gpt-a", client: new OpenAI({ apiKey: "k", baseURL: `${server.url}/v1` }) });
const fallbackModel = () => anthropicModel({ model: "claude-b", client: new Anthropic({ apiKey: "k", baseURL: server.url }) });
// Very different prices, so the journaled cost tells which model it was priced by.
const prices = { "gpt-a": { input: 1000, output: 1000 }, "claude-b": { input: 1, output: 2 } };

const deploy = defineTool({
  name: "deploy",
  description: "Deploys.",
  input: z.object({ env: z.string() }),
  effect: "idempotent",
  approval: true,
  run: ({ env }) => `deployed to ${env}`,
});

function agent(name: string) {
  return defineAgent({
    name,
    model: primaryModel,
    fallbacks: [fallbackModel],
    tools: [deploy],
    prices,
    budget: { maxCostUsd: 5 },
    retry: { maxAttempts: 2, initialDelay: "10ms" },
  });
}

const byModel = (requests: LedgerEntry[]) => ({
  a: requests.filter((r) => r.body?.model === "gpt-a").length,
  b: requests.filter((r) => r.body?.model === "claude-b").length,
});

describe("fallback models", () => {
  it("try the next model after the primary's retries, journal the model that answered, price by it, and a resume re-sends nothing", async () => {
    const store = storeUrl("sqlite");
    const workflow = agent("fallback-agent");
    const first = await createEngine({ store, workflows: [workflow], logger: silentLogger });
    first.startWorker({ pollInterval: 10 });
    fallbackAnswers.push({ toolCalls: [{ id: "toolu_1", name: "deploy", arguments: { env: "staging" } }], usage: { input: 10, output: 5 } });
    const before = server.requests.length;
    await first.start(workflow, { prompt: "Deploy to staging." }, { runId: "fb-1" });
    // The run waits for the deploy approval after the fallback's answer.
    await waitFor(async () => (await first.listHumanRequests({ status: "pending", runId: "fb-1" })).length === 1, { what: "the approval" });
    expect(byModel(server.requests.slice(before))).toEqual({ a: 2, b: 1 });

    const journal = await readJournal(first, "fb-1");
    const intents = journal.filter((e) => e.kind === "step.started" && /model#\d+$/.test(e.opKey ?? "")).map((e) => (e.data as { intent: unknown }).intent);
    expect(intents[0]).toMatchObject({ model: "gpt-a" });
    expect(intents.at(-1)).toMatchObject({ model: "claude-b", fallbackFrom: [{ model: "gpt-a", code: "MODEL_PROVIDER_FAILED" }] });
    const answered = journal.find((e) => e.kind === "step.completed" && /model#\d+$/.test(e.opKey ?? ""))!.data as { result: Record<string, unknown> };
    // Priced by claude-b (10 input × $1/M + 5 output × $2/M = 20 µ$), not by gpt-a (15 000 µ$).
    expect(answered.result).toMatchObject({ model: "claude-b", answeredBy: "claude-b", costMicros: 20 });
    const view = agentRunView(journal);
    expect(view.spend.costMicros).toBe(20);
    const fallback = view.items.find((item) => item.kind === "fallback");
    expect(fallback).toMatchObject({ kind: "fallback", from: "gpt-a", to: "claude-b" });
    expect(transcriptLines(fallback!).join("\n")).toMatch(/fallback\s+gpt-a failed \(.*primary is down.*\); claude-b answered/);
    await first.close();

    // The primary is back. A fresh engine resumes the run from the journal: turn 1 is not sent again
    // to either model; turn 2 goes to the primary, with the fallback's tool call in its input.
    primary = () => ({ text: "Deployed to staging.", usage: { input: 30, output: 4 } });
    const second = await createEngine({ store, workflows: [workflow], logger: silentLogger });
    onCleanup(() => second.close());
    second.startWorker({ pollInterval: 10 });
    const resumedAt = server.requests.length;
    const [approval] = await second.listHumanRequests({ status: "pending", runId: "fb-1" });
    await second.respondToHuman(approval!.requestId, { action: "answer", option: "approve", by: "ops" });
    const result = (await second.result("fb-1", { timeoutMs: 10_000 })) as AgentResult;
    expect(result.text).toBe("Deployed to staging.");
    const resumed = server.requests.slice(resumedAt);
    expect(byModel(resumed)).toEqual({ a: 1, b: 0 });
    const input = resumed[0]!.body.input as { type?: string; call_id?: string; output?: string }[];
    expect(input.find((i) => i.type === "function_call")).toMatchObject({ call_id: "toolu_1" });
    expect(input.find((i) => i.type === "function_call_output")).toMatchObject({ call_id: "toolu_1", output: "deployed to staging" });
    // 20 µ$ from claude-b + (30 × 1000 + 4 × 1000) / 1e6 $ = 34 000 µ$ from gpt-a.
    expect(result.totals.costMicros).toBe(34_020);
  });

  it("do not fall back on a rejected request (400): one request, the run fails with the provider's message", async () => {
    primary = () => ({ status: 400, message: "messages: roles must alternate" });
    const workflow = agent("fallback-400");
    const engine = await testEngine("memory", { workflows: [workflow] });
    engine.startWorker({ pollInterval: 10 });
    const before = server.requests.length;
    await engine.start(workflow, { prompt: "hi" }, { runId: "fb-400" });
    await expect(engine.result("fb-400", { timeoutMs: 10_000 })).rejects.toThrow(/roles must alternate/);
    expect(byModel(server.requests.slice(before))).toEqual({ a: 1, b: 0 });
  });

  it("fail with the last model's error when every model is down, each after its own retries", async () => {
    fallbackAnswers.push({ status: 503, message: "fallback is down too" }, { status: 503, message: "fallback is down too" });
    const workflow = agent("fallback-all-down");
    const engine = await testEngine("memory", { workflows: [workflow] });
    engine.startWorker({ pollInterval: 10 });
    const before = server.requests.length;
    await engine.start(workflow, { prompt: "hi" }, { runId: "fb-down" });
    await expect(engine.result("fb-down", { timeoutMs: 10_000 })).rejects.toThrow(/claude-b.*fallback is down too/);
    expect(byModel(server.requests.slice(before))).toEqual({ a: 2, b: 2 });
  });
});
