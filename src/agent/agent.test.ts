import { describe, expect, it } from "vitest";
import { z } from "zod";
import { sharedEngines, STORE_KINDS, testEngine } from "../../test/support/engines.js";
import { isCairnError } from "../core/errors.js";
import type { Engine } from "../engine/engine.js";
import { waitFor } from "../testing/wait-for.js";
import { agentTool, defineAgent, type AgentResult } from "./agent.js";
import { transcriptProblems } from "./model/messages.js";
import type { Model, ModelRequest } from "./model/model.js";
import { estimateTokens } from "./model/estimate.js";
import { ScriptedModel, type ScriptedTurn } from "./model/scripted.js";
import { argumentsHash, defineTool } from "./tool.js";

const fast = { pollInterval: 10 };

const call = (id: string, name: string, input: unknown) => ({ type: "tool_use" as const, id, name, input: input as never });

/** The tool results the request ends with. */
function lastResults(request: ModelRequest) {
  const last = request.messages.at(-1);
  return last?.role === "tool" ? last.content : [];
}

/** A scripted model that counts its calls across engines (one instance shared by all of them). */
function counted(turns: ScriptedTurn[], modelId = "scripted"): ScriptedModel {
  return new ScriptedModel(turns, { modelId });
}

function makeTools(ledger: string[]) {
  const add = defineTool({
    name: "add",
    description: "Adds two numbers.",
    input: z.object({ a: z.number(), b: z.number() }),
    effect: "idempotent",
    run: ({ a, b }, { idempotencyKey }) => {
      ledger.push(`add ${idempotencyKey}`);
      return a + b;
    },
  });
  const deploy = defineTool({
    name: "deploy",
    description: "Deploys a service.",
    input: z.object({ service: z.string(), replicas: z.number().int().positive() }),
    effect: "unsafe",
    approval: { when: ({ replicas }) => replicas > 1, timeout: "1h" },
    run: ({ service, replicas }) => {
      ledger.push(`deploy ${service} ${replicas}`);
      return `deployed ${service} ×${replicas}`;
    },
  });
  return { add, deploy };
}

async function pendingApprovals(engine: Engine, runId: string) {
  return engine.listHumanRequests({ status: "pending", runId });
}

describe.each(STORE_KINDS)("defineAgent on %s", (kind) => {
  it("loops model → tools → model, journals every call once, and returns the answer with its totals", async () => {
    const ledger: string[] = [];
    const { add } = makeTools(ledger);
    const model = counted([
      { content: [{ type: "text", text: "Let me add." }, call("c1", "add", { a: 2, b: 3 }), call("c2", "add", { b: 10, a: 1 })] },
      {
        content: "The sums are 5 and 11.",
        expect: (request) =>
          expect(lastResults(request).map((r) => [r.toolUseId, r.content])).toEqual([
            ["c1", "5"],
            ["c2", "11"],
          ]),
      },
    ]);
    const agent = defineAgent({ name: "adder", model, system: "You add.", tools: [add] });
    const engine = await testEngine(kind, { workflows: [agent] });
    engine.startWorker(fast);
    await engine.start(agent, { prompt: "add things" }, { runId: "a" });
    const result = (await engine.result("a", { timeoutMs: 5000 })) as AgentResult;
    expect(result.text).toBe("The sums are 5 and 11.");
    expect(result.turns).toBe(2);
    expect(result.totals.steps).toBe(2);
    expect(result.totals.toolCalls).toBe(2);
    expect(result.totals.usage.outputTokens).toBeGreaterThan(0);
    expect(transcriptProblems(result.messages)).toEqual([]);
    expect(ledger).toEqual(["add a:tool:0:c1", "add a:tool:0:c2"]);
    expect(model.calls).toBe(2);
    const intents = (await engine.journal("a")).filter((e) => e.kind === "step.started" && e.opKey?.includes("/tool-")).map((e) => e.data);
    expect(intents).toEqual([
      {
        attempt: 1,
        intent: { tool: "add", toolCallId: "c1", idempotencyKey: "a:tool:0:c1", effect: "idempotent", argumentsHash: argumentsHash({ a: 2, b: 3 }) },
      },
      {
        attempt: 1,
        intent: { tool: "add", toolCallId: "c2", idempotencyKey: "a:tool:0:c2", effect: "idempotent", argumentsHash: argumentsHash({ a: 1, b: 10 }) },
      },
    ]);
  });

  it("returns bad arguments, unknown tools and failed tools to the model instead of failing the run", async () => {
    const ledger: string[] = [];
    const { add } = makeTools(ledger);
    const broken = defineTool({
      name: "broken",
      description: "Always fails.",
      input: z.object({}),
      effect: "none",
      retry: { maxAttempts: 1 },
      run: (): string => {
        throw new Error("disk on fire");
      },
    });
    const model = counted([
      { content: [call("c1", "add", { a: "two", b: 3 }), call("c2", "nope", {}), call("c3", "add", "{not json"), call("c4", "broken", {})] },
      (request) => {
        const results = lastResults(request);
        expect(results.every((r) => r.isError)).toBe(true);
        expect(results[0]!.content).toContain("a:");
        expect(results[1]!.content).toContain('no tool named "nope"');
        expect(results[2]!.content).toContain("not valid JSON");
        expect(results[3]!.content).toContain("disk on fire");
        return { content: "I could not do it." };
      },
    ]);
    const agent = defineAgent({ name: "clumsy", model, tools: [add, broken] });
    const engine = await testEngine(kind, { workflows: [agent] });
    engine.startWorker(fast);
    await engine.start(agent, { prompt: "go" }, { runId: "c" });
    expect(((await engine.result("c", { timeoutMs: 5000 })) as AgentResult).text).toBe("I could not do it.");
    expect(ledger).toEqual([]);
  });

  it("asks for approval before a matching call runs: approve, reject and edit, several at once", async () => {
    const ledger: string[] = [];
    const { deploy } = makeTools(ledger);
    const model = counted([
      {
        content: [
          call("d1", "deploy", { service: "api", replicas: 3 }),
          call("d2", "deploy", { service: "db", replicas: 2 }),
          call("d3", "deploy", { service: "web", replicas: 5 }),
          call("d4", "deploy", { service: "cron", replicas: 1 }),
        ],
      },
      (request) => ({
        content: lastResults(request)
          .map((r) => `${r.toolUseId}=${r.isError ? "error" : "ok"}:${r.content}`)
          .join("; "),
      }),
    ]);
    const agent = defineAgent({ name: "deployer", model, tools: [deploy] });
    const [one, two] = await sharedEngines(kind, [agent], [agent]);
    const worker = one!.startWorker(fast);
    await one!.start(agent, { prompt: "deploy" }, { runId: "d" });
    // Three calls need approval (replicas > 1), the fourth ran without asking.
    await waitFor(async () => (await pendingApprovals(one!, "d")).length === 3, { what: "three approvals pending" });
    const requests = await pendingApprovals(one!, "d");
    expect(requests.map((r) => r.options)).toEqual([
      ["approve", "reject", "edit"],
      ["approve", "reject", "edit"],
      ["approve", "reject", "edit"],
    ]);
    expect(ledger).toEqual(["deploy cron 1"]);
    const id = (callId: string) => requests.find((r) => r.opKey.endsWith(`approve-${callId}#0`))!.requestId;
    await one!.respondToHuman(id("d1"), { action: "answer", option: "approve", by: "ada" });
    // A restart while two approvals are still pending: nothing runs twice, nothing is asked twice.
    await waitFor(() => ledger.length === 2);
    await worker.stop();
    two!.startWorker(fast);
    await two!.respondToHuman(id("d2"), { action: "answer", option: "reject", by: "bob", message: "db is frozen" });
    await two!.respondToHuman(id("d3"), { action: "answer", option: "edit", value: { service: "web", replicas: 2 }, by: "cy" });
    const result = (await two!.result("d", { timeoutMs: 5000 })) as AgentResult;
    expect(result.text).toBe(
      'd1=ok:deployed api ×3; d2=error:A person (bob) rejected this call; it did not run. Their note: db is frozen; d3=ok:[A person (cy) edited the arguments before the call ran; it ran with {"service":"web","replicas":2}.]\ndeployed web ×2; d4=ok:deployed cron ×1',
    );
    expect(ledger.sort()).toEqual(["deploy api 3", "deploy cron 1", "deploy web 2"]);
    const journal = await two!.journal("d");
    expect(journal.filter((e) => e.kind === "human.requested")).toHaveLength(3);
    // The approval is bound to the arguments it was asked about; the edited call journals its own hash.
    const asked = journal.find((e) => e.kind === "human.requested" && e.opKey?.endsWith("approve-d3#0"))!.data as { context: { argumentsHash: string } };
    expect(asked.context.argumentsHash).toBe(argumentsHash({ service: "web", replicas: 5 }));
    const ran = journal.find((e) => e.kind === "step.started" && e.opKey?.endsWith("tool-d3#0"))!.data as {
      intent: { argumentsHash: string; approvedBy: string };
    };
    expect(ran.intent).toMatchObject({ argumentsHash: argumentsHash({ service: "web", replicas: 2 }), approvedBy: "cy" });
  });

  it("escalates an expired approval as declared", async () => {
    const ledger: string[] = [];
    const risky = defineTool({
      name: "risky",
      description: "Risky.",
      input: z.object({ n: z.number() }),
      effect: "idempotent",
      approval: { timeout: "30ms", onTimeout: "approve" },
      run: ({ n }) => (ledger.push(`risky ${n}`), n),
    });
    const model = counted([{ content: [call("r1", "risky", { n: 1 })] }, (request) => ({ content: lastResults(request)[0]!.content })]);
    const agent = defineAgent({ name: "impatient", model, tools: [risky] });
    const engine = await testEngine(kind, { workflows: [agent] });
    engine.startWorker(fast);
    await engine.start(agent, { prompt: "go" }, { runId: "t" });
    expect(((await engine.result("t", { timeoutMs: 5000 })) as AgentResult).text).toBe("1");
    expect(ledger).toEqual(["risky 1"]);
    const ran = (await engine.journal("t")).find((e) => e.kind === "step.started" && e.opKey?.includes("tool-r1"))!.data as { intent: { approvedBy: string } };
    expect(ran.intent.approvedBy).toBe("timeout");
  });

  it("stops hard at a ceiling, refusing the call that would cross it, with the totals in the error", async () => {
    const loop: ScriptedTurn = () => ({ content: [call(`x${Math.random()}`.replace(".", ""), "noop", {})], usage: { inputTokens: 1000, outputTokens: 1000 } });
    const noop = defineTool({ name: "noop", description: "Nothing.", input: z.object({}), effect: "none", run: () => "ok" });
    const priced = "priced-model";
    const prices = { [priced]: { input: 1, output: 1 } }; // $1 per million tokens: $0.002 per call, estimated $0.0001 + maxTokens
    const agent = defineAgent({
      name: "spender",
      model: counted(
        Array.from({ length: 50 }, () => loop),
        priced,
      ),
      tools: [noop],
      prices,
      maxTokens: 1000,
      budget: { maxCostUsd: 0.01 },
    });
    const engine = await testEngine(kind, { workflows: [agent] });
    engine.startWorker(fast);
    await engine.start(agent, { prompt: "spend" }, { runId: "b" });
    await waitFor(async () => (await engine.getRun("b")).status === "failed", { what: "the run fails" });
    const run = await engine.getRun("b");
    expect(run.error).toMatchObject({ code: "BUDGET_EXCEEDED" });
    expect(run.error?.message).toContain("maxCostUsd");
    // Each call cost $0.002 and is estimated at just over $0.001 (its prompt, and 1,000 tokens of
    // output): the fifth still fit under $0.01, the sixth would have crossed it and was not made.
    const calls = (await engine.journal("b")).filter((e) => e.kind === "step.completed" && e.opKey?.endsWith("/model#0"));
    expect(calls).toHaveLength(5);
    expect(run.error?.message).toContain("$0.010000 over 5 model calls");
  });

  it("pauses for a person before entering the next cost tier", async () => {
    const noop = defineTool({ name: "noop", description: "Nothing.", input: z.object({}), effect: "none", run: () => "ok" });
    let n = 0;
    const turn: ScriptedTurn = () => ({ content: [call(`t${n++}`, "noop", {})], usage: { inputTokens: 1000, outputTokens: 1000 } });
    const agent = defineAgent({
      name: "tiered",
      model: counted([turn, turn, turn, turn, { content: "done", usage: { inputTokens: 10, outputTokens: 10 } }], "priced-model"),
      tools: [noop],
      prices: { "priced-model": { input: 1, output: 1 } },
      maxTokens: 1000,
      budget: { maxCostUsd: 1, tiers: [0.005] },
    });
    const engine = await testEngine(kind, { workflows: [agent] });
    engine.startWorker(fast);
    await engine.start(agent, { prompt: "go" }, { runId: "tier" });
    await waitFor(async () => (await pendingApprovals(engine, "tier")).length === 1, { what: "a tier approval" });
    const [request] = await pendingApprovals(engine, "tier");
    expect(request!.options).toEqual(["continue", "stop"]);
    expect((await engine.journal("tier")).filter((e) => e.kind === "step.completed" && e.opKey?.endsWith("/model#0"))).toHaveLength(2);
    await engine.respondToHuman(request!.requestId, { action: "answer", option: "continue", by: "ops" });
    const result = (await engine.result("tier", { timeoutMs: 5000 })) as AgentResult;
    expect(result.text).toBe("done");
    expect(result.totals.steps).toBe(5);
  });

  // Long runs of sequential turns test the context window, not the store: 2,000 on memory, 500 on SQLite
  // (still 15+ summaries), none on PostgreSQL (each would add a minute to CI).
  it.skipIf(kind === "postgres")("summarizes older turns to stay within the window, keeping the transcript valid", async () => {
    const noop = defineTool({
      name: "lookup",
      description: "Looks up a fact.",
      input: z.object({ q: z.string() }),
      effect: "none",
      run: ({ q }) => `fact about ${q} `.repeat(20),
    });
    const turns = kind === "memory" ? 2000 : 500;
    const prompts: number[] = [];
    const agentModel: Model = {
      provider: "scripted",
      modelId: "scripted",
      async generate(request) {
        expect(transcriptProblems(request.messages)).toEqual([]);
        const assistantTurns = request.messages.filter((m) => m.role === "assistant").length;
        prompts.push(estimateTokens(request).inputTokens);
        const done = request.messages.some((m) => m.role === "tool") && prompts.length >= turns;
        const reply = new ScriptedModel([{ content: done ? "finished" : [call(`q${prompts.length}`, "lookup", { q: `topic ${assistantTurns}` })] }], {
          cursor: "calls",
        });
        return reply.generate(request);
      },
    };
    const summarizer = new ScriptedModel(
      Array.from({ length: 1000 }, () => ({ content: "Summary: looked up many topics." })),
      { cursor: "calls", validate: true },
    );
    const agent = defineAgent({
      name: "long",
      model: agentModel,
      tools: [noop],
      context: { windowTokens: 4000, summarizeAt: 0.5, keepRecent: 4, summaryModel: summarizer },
      snapshotEvery: 20,
    });
    const engine = await testEngine(kind, { workflows: [agent] });
    engine.startWorker(fast);
    await engine.start(agent, { prompt: "research everything" }, { runId: "long" });
    const result = (await engine.result("long", { timeoutMs: 60_000 })) as AgentResult;
    expect(result.text).toBe("finished");
    expect(transcriptProblems(result.messages)).toEqual([]);
    expect(summarizer.calls).toBeGreaterThan(10);
    // Every prompt stayed under the window although the run made hundreds of calls with long tool results.
    expect(prompts).toHaveLength(turns);
    expect(Math.max(...prompts)).toBeLessThan(4000);
    const summaries = (await engine.journal("long")).filter((e) => e.kind === "step.started" && e.opKey?.endsWith("/summarize#0"));
    expect(summaries[0]!.data).toMatchObject({ intent: { summary: 1, model: "scripted", messages: { from: 0 } } });
  });

  it("pins a run to its manifest: a changed definition is refused with the diff unless it declares a migration", async () => {
    const ledger: string[] = [];
    const { deploy } = makeTools(ledger);
    const script = (): ScriptedTurn[] => [{ content: [call("d1", "deploy", { service: "api", replicas: 2 })] }, { content: "done" }];
    const original = defineAgent({ name: "pinned", model: counted(script()), system: "Deploy carefully.", tools: [deploy] });
    const changed = defineAgent({ name: "pinned", model: counted(script()), system: "Deploy fast.", tools: [deploy] });
    const migrating = defineAgent({
      name: "pinned",
      model: counted(script()),
      system: "Deploy fast.",
      tools: [deploy],
      migrate: (changes) => changes.every((c) => c.field === "systemHash"),
    });
    for (const [runId, next, outcome] of [
      ["refused", changed, "failed"],
      ["migrated", migrating, "completed"],
    ] as const) {
      const [one, two] = await sharedEngines(kind, [original], [next]);
      const worker = one!.startWorker(fast);
      await one!.start(original, { prompt: "deploy" }, { runId });
      await waitFor(async () => (await pendingApprovals(one!, runId)).length === 1);
      await worker.stop();
      two!.startWorker(fast);
      const [request] = await pendingApprovals(two!, runId);
      await two!.respondToHuman(request!.requestId, { action: "answer", option: "approve" });
      await waitFor(async () => (await two!.getRun(runId)).status === outcome, { what: `${runId} ${outcome}` });
      if (outcome === "failed") {
        const error = (await two!.getRun(runId)).error;
        expect(error).toMatchObject({ code: "MANIFEST_CHANGED" });
        expect(error?.message).toContain("systemHash was");
      }
    }
    expect(ledger).toEqual(["deploy api 2"]);
  });

  it("runs sub-agents as child runs within what is left of the caller's budget, and adds their spend", async () => {
    const prices = { "priced-model": { input: 1, output: 1 } };
    const usage = { inputTokens: 500, outputTokens: 500 }; // $0.001 per call
    const child = defineAgent({
      name: "helper-agent",
      model: counted([(request) => ({ content: `answer to ${JSON.stringify(request.messages[0]!.content)}`, usage })], "priced-model"),
      prices,
      maxTokens: 600,
    });
    const parent = defineAgent({
      name: "lead-agent",
      model: counted(
        [
          { content: [call("a1", "delegate", { task: "first" }), call("a2", "delegate", { task: "second" })], usage },
          (request) => ({
            content: lastResults(request)
              .map((r) => `${r.isError ? "error" : "ok"}: ${r.content}`)
              .join(" | "),
            usage,
          }),
        ],
        "priced-model",
      ),
      tools: [agentTool({ name: "delegate", description: "Hands a task to a helper.", agent: child })],
      prices,
      maxTokens: 600,
      budget: { maxCostUsd: 1 },
    });
    const engine = await testEngine(kind, { workflows: [parent, child] });
    engine.startWorker(fast);
    await engine.start(parent, { prompt: "lead" }, { runId: "lead" });
    const result = (await engine.result("lead", { timeoutMs: 5000 })) as AgentResult;
    expect(result.text).toBe('ok: answer to "first" | ok: answer to "second"');
    // Two calls of its own and one per sub-agent: $0.004 in all.
    expect(result.totals.steps).toBe(4);
    expect(result.totals.costMicros).toBe(4000);
    const children = (await engine.listRuns({ workflow: "helper-agent" })).runs;
    expect(children.map((r) => r.parentRunId)).toEqual(["lead", "lead"]);

    // With less left than a sub-agent's call could cost, the sub-agent stops at the caller's ceiling.
    const tight = defineAgent({
      name: "tight-lead",
      model: counted(
        [
          { content: [call("b1", "delegate", { task: "big" })], usage },
          (request) => ({ content: lastResults(request)[0]!.content, usage: { inputTokens: 1, outputTokens: 1 } }),
        ],
        "priced-model",
      ),
      tools: [agentTool({ name: "delegate", description: "Hands a task to a helper.", agent: child })],
      prices,
      maxTokens: 10,
      budget: { maxCostUsd: 0.0015 },
    });
    const second = await testEngine(kind, { workflows: [tight, child] });
    second.startWorker(fast);
    await second.start(tight, { prompt: "lead" }, { runId: "tight" });
    const text = ((await second.result("tight", { timeoutMs: 5000 })) as AgentResult).text;
    expect(text).toContain("did not finish");
    expect(text).toContain("maxCostUsd");
  });

  it("keeps working memory outside the window and searches the run's own history", async () => {
    const lookup = defineTool({
      name: "lookup",
      description: "Looks something up.",
      input: z.object({ q: z.string() }),
      effect: "none",
      run: ({ q }) => `Notes on ${q}: solid electrolytes are ceramic or polymer; dendrites pierce liquid ones.`,
    });
    const model = counted([
      {
        content: [
          call("l1", "lookup", { q: "batteries" }),
          call("s1", "memory_set", { key: "topic", value: "batteries" }),
          call("s2", "memory_set", { key: "year", value: "soon" }),
        ],
      },
      (request) => {
        const results = lastResults(request);
        expect(results[1]).toMatchObject({ content: 'Remembered "topic".' });
        expect(results[2]).toMatchObject({ isError: true });
        expect(results[2]!.content).toContain("Invalid value");
        return {
          content: [call("g1", "memory_get", { key: "topic" }), call("h1", "search_history", { query: "dendrites pierce" }), call("k1", "memory_list", {})],
        };
      },
      (request) => {
        const [got, found, keys] = lastResults(request);
        expect(got!.content).toBe('"batteries"');
        expect(found!.content).toContain("dendrites pierce liquid ones");
        expect(keys!.content).toBe('["seen","topic"]');
        return { content: "done" };
      },
    ]);
    const agent = defineAgent({
      name: "rememberer",
      model,
      retry: { maxAttempts: 1 },
      tools: [lookup],
      memory: { schema: { topic: z.string(), year: z.number() } },
    });
    const engine = await testEngine(kind, { workflows: [agent] });
    engine.startWorker(fast);
    await engine.start(agent, { prompt: "research", memory: { seen: 1 } } as never, { runId: "mem" });
    const result = (await engine.result("mem", { timeoutMs: 5000 })) as AgentResult;
    expect(result.text).toBe("done");
    expect(result.memory).toEqual({ seen: 1, topic: "batteries" });
    expect(model.requests[0]!.tools!.map((t) => t.name)).toEqual(["lookup", "memory_set", "memory_get", "memory_list", "search_history"]);
  });

  it.each(["unsafe", "reversible", "none"] as const)("resolves a %s tool call interrupted by a crash by its effect, never blindly", async (effect) => {
    const ledger: string[] = [];
    const hang = new Promise<string>(() => {});
    let crashed = false;
    const tool = defineTool({
      name: "charge",
      description: "Charges a card.",
      input: z.object({ cents: z.number() }),
      effect,
      run: ({ cents }, { attempt }) => {
        ledger.push(`run ${cents} attempt ${attempt}`);
        return crashed ? `charged ${cents}` : hang;
      },
      ...(effect === "reversible"
        ? { compensate: (input: { cents: number }, output: string | undefined) => void ledger.push(`refund ${input.cents} ${output ?? "?"}`) }
        : {}),
    });
    const script = (): ScriptedTurn[] => [{ content: [call("p1", "charge", { cents: 500 })] }, (request) => ({ content: lastResults(request)[0]!.content })];
    const agent = defineAgent({ name: `pay-${effect}`, model: counted(script()), tools: [tool] });
    const [one, two] = await sharedEngines(kind, [agent], [agent]);
    const worker = one!.startWorker(fast);
    await one!.start(agent, { prompt: "pay" }, { runId: "p" });
    await waitFor(() => ledger.length === 1, { what: "the charge running" });
    await worker.stop({ drain: false }); // the worker dies with the call in flight: intent, no outcome
    crashed = true;
    two!.startWorker(fast);
    if (effect === "unsafe") {
      // Nobody knows whether the card was charged: a person is asked, and the call is not run again.
      await waitFor(async () => (await two!.listHumanRequests({ status: "pending", runId: "p" })).length === 1, { what: "the question" });
      const [question] = await two!.listHumanRequests({ status: "pending", runId: "p" });
      expect(question!.options).toEqual(["retry", "skip", "fail"]);
      await two!.respondToHuman(question!.requestId, { action: "skip", value: "charged 500 (confirmed by hand)" });
    }
    const text = ((await two!.result("p", { timeoutMs: 5000 })) as AgentResult).text;
    if (effect === "unsafe") {
      expect(text).toBe("charged 500 (confirmed by hand)");
      expect(ledger).toEqual(["run 500 attempt 1"]);
    } else if (effect === "reversible") {
      expect(text).toBe("charged 500");
      expect(ledger).toEqual(["run 500 attempt 1", "refund 500 ?", "run 500 attempt 2"]);
    } else {
      expect(text).toBe("charged 500");
      expect(ledger).toEqual(["run 500 attempt 1", "run 500 attempt 2"]);
    }
  });

  it("refuses bad definitions and inputs with errors that say what to do", async () => {
    expect(() => defineTool({ name: "bad name", description: "x", input: z.object({}), effect: "none", run: () => 1 })).toThrow(/letters, digits/);
    expect(() => defineTool({ name: "undo", description: "x", input: z.object({}), effect: "reversible", run: () => 1 })).toThrow(/compensate/);
    const model = counted([]);
    expect(() => defineAgent({ name: "x", model, budget: { maxCostUsd: 1, tiers: [2] } })).toThrow(/below maxCostUsd/);
    expect(() => defineAgent({ name: "x", model, budget: { maxSteps: 0 } })).toThrow(/maxSteps/);
    const agent = defineAgent({ name: "x", model });
    const engine = await testEngine(kind, { workflows: [agent] });
    engine.startWorker(fast);
    await engine.start(agent, { nope: 1 } as never, { runId: "bad" });
    await waitFor(async () => (await engine.getRun("bad")).status === "failed");
    const error = (await engine.getRun("bad")).error;
    expect(error?.message).toContain("{ prompt: string }");
    expect(isCairnError(error)).toBe(true);
  });
});
