import { expect, it } from "vitest";
import { z } from "zod";
import { defineAgent } from "../../src/agent/agent.js";
import { ScriptedModel } from "../../src/agent/model/scripted.js";
import { defineTool } from "../../src/agent/tool.js";
import { secret } from "../../src/core/secret.js";
import { defineWorkflow } from "../../src/engine/define-workflow.js";
import type { Engine, EngineOptions } from "../../src/engine/engine.js";
import { waitFor } from "../../src/testing/wait-for.js";
import { onCleanup } from "./engines.js";
import { testServer } from "./server.js";

const STEP_SECRET = "sk-step-0123456789";
const EVENT_SECRET = "evt-secret-abcdef";
const INPUT_SECRET = "input-secret-xyz";
const CONTEXT_SECRET = "ctx-secret-777777";
const ANSWER_SECRET = "otp-998877";
const TOOL_ARG_SECRET = "card-4111111111111111";
const TOOL_OUT_SECRET = "tool-out-secret-42";
const ERROR_SECRET = "err-secret-55555";
const ALL = [STEP_SECRET, EVENT_SECRET, INPUT_SECRET, CONTEXT_SECRET, ANSWER_SECRET, TOOL_ARG_SECRET, TOOL_OUT_SECRET, ERROR_SECRET];

/** A secret step result copied into a loop state (snapshotted every iteration) and into the output. */
const copier = defineWorkflow({
  name: "copier",
  version: "1",
  async run(ctx) {
    const key = await ctx.step("key", () => STEP_SECRET, { secret: true });
    const state = await ctx.loop("copy", { seen: [] as string[] }, async (s, it) => (s.seen.length >= 2 ? it.done(s) : { seen: [...s.seen, `k=${key}`] }), {
      snapshotEvery: 1,
    });
    await ctx.step("echo", () => `prefix ${key} suffix`);
    return { state, key, length: key.length };
  },
});

/** A secret event's payload, and a secret run input, used by the run and copied into its output. */
const listener = defineWorkflow({
  name: "listener",
  version: "1",
  async run(ctx, input: { token: string }) {
    const event = await ctx.waitForEvent<{ apiKey: string }>("creds");
    return { got: event.apiKey, input: input.token, ok: event.apiKey === EVENT_SECRET && input.token === INPUT_SECRET };
  },
});

/** A question with a secret in its context, whose answer is secret. */
const asker = defineWorkflow({
  name: "asker",
  version: "1",
  async run(ctx) {
    const reply = await ctx.askHuman({ question: "Enter the code", context: { key: secret(CONTEXT_SECRET), note: "visible-note" }, secret: true });
    return { code: reply.value, right: reply.value === ANSWER_SECRET };
  },
});

/** A step whose error message carries a secret it learned. */
const leaky = defineWorkflow({
  name: "leaky",
  version: "1",
  async run(ctx) {
    const key = await ctx.step("key", () => secret(ERROR_SECRET));
    await ctx.step(
      "use",
      () => {
        throw new Error(`login failed with ${key}`);
      },
      { retry: { maxAttempts: 2, initialDelay: 1 } },
    );
  },
});

const pay = defineTool({
  name: "pay",
  description: "Pays with a card.",
  input: z.object({ card: z.string() }),
  effect: "idempotent",
  secret: true,
  run: ({ card }) => `${TOOL_OUT_SECRET} for ${card.slice(-4)}`,
});

const payer = defineAgent({
  name: "payer",
  model: () => new ScriptedModel([{ content: [{ type: "tool_use", id: "c1", name: "pay", input: { card: TOOL_ARG_SECRET } }] }, { content: "paid" }]),
  tools: [pay],
  snapshotEvery: 1,
});

const WORKFLOWS = [copier, listener, asker, leaky, payer];

/**
 * Secrets never show through any view: the run row (get, list, stuck), the journal (pages and the
 * stream), human requests, errors and agent transcripts, whichever way they were marked. Each test
 * also checks the run did get the real value, so it proves redaction, not absence.
 */
export function secretsSuite(makeEngine: (options: EngineOptions) => Promise<Engine>): void {
  async function setup() {
    const engine = await makeEngine({ workflows: WORKFLOWS });
    const worker = engine.startWorker({ pollInterval: 10 });
    onCleanup(() => worker.stop());
    const server = await testServer(engine);
    const get = async (path: string) => {
      const res = await fetch(`${server.url}${path}`);
      return { status: res.status, text: await res.text() };
    };
    /** Every view of the run, as raw response text. */
    const views = async (runId: string) => {
      const id = encodeURIComponent(runId);
      const texts = [
        (await get(`/runs/${id}`)).text,
        (await get(`/runs`)).text,
        (await get(`/runs/${id}/journal`)).text,
        (await get(`/runs/${id}/stream`)).text, // the run is finished: the stream ends by itself
        (await get(`/human-requests?status=answered`)).text,
        (await get(`/human-requests`)).text,
        JSON.stringify(await engine.journal(runId)),
        JSON.stringify(await engine.getRun(runId)),
      ];
      return texts.join("\n");
    };
    const expectHidden = (text: string) => {
      for (const value of ALL) expect(text).not.toContain(value);
    };
    return { engine, server, get, views, expectHidden };
  }

  it("a secret step result is redacted in its entry, a loop snapshot, a later step result and the run output", async () => {
    const { engine, views, expectHidden } = await setup();
    const handle = await engine.start(copier, null, { runId: "copy" });
    const output = await handle.result({ timeoutMs: 20_000 });
    expect(output).toEqual({ state: { seen: [`k=${STEP_SECRET}`, `k=${STEP_SECRET}`] }, key: STEP_SECRET, length: STEP_SECRET.length });
    const text = await views("copy");
    expectHidden(text);
    expect(text).toContain("k=[redacted]");
    expect(text).toContain("prefix [redacted] suffix");
    const snapshots = (await engine.journal("copy")).filter((e) => e.kind === "loop.snapshot" || e.kind === "loop.completed");
    expect(snapshots.length).toBeGreaterThan(0);
    expect(JSON.stringify(snapshots)).toContain("k=[redacted]");
  });

  it("a secret event (API `secret: true`) and a secret() run input are redacted in event.received, run.created and the output", async () => {
    const { engine, server, views, expectHidden } = await setup();
    await engine.start(listener, { token: secret(INPUT_SECRET) } as never, { runId: "listen" });
    const sent = await fetch(`${server.url}/runs/listen/events`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ type: "creds", payload: { apiKey: EVENT_SECRET }, secret: true }),
    });
    expect(sent.status).toBe(202);
    expect(await engine.handle("listen").result({ timeoutMs: 20_000 })).toMatchObject({ ok: true });
    const text = await views("listen");
    expectHidden(text);
    const received = (await engine.journal("listen")).find((e) => e.kind === "event.received");
    expect((received?.data as { payload: unknown }).payload).toBe("[redacted]");
    expect((await engine.getRun("listen")).input).toEqual({ token: "[redacted]" });
  });

  it("an event sent with sendEvent(..., { secret: true }) is redacted too", async () => {
    const { engine, views, expectHidden } = await setup();
    await engine.start(listener, { token: secret(INPUT_SECRET) } as never, { runId: "listen2" });
    await engine.sendEvent("listen2", "creds", { apiKey: EVENT_SECRET }, { secret: true });
    expect(await engine.handle("listen2").result({ timeoutMs: 20_000 })).toMatchObject({ ok: true });
    expectHidden(await views("listen2"));
  });

  it("a secret() in a human request's context and the answer to a secret request are redacted, before and after the run consumes it", async () => {
    const { engine, server, get, views, expectHidden } = await setup();
    await engine.start(asker, null, { runId: "ask" });
    await waitFor(async () => (await engine.listHumanRequests({ status: "pending" })).length === 1);
    const pending = await get("/human-requests");
    expectHidden(pending.text);
    expect(pending.text).toContain("visible-note");
    expect(JSON.parse(pending.text).requests[0].context).toEqual({ key: "[redacted]", note: "visible-note" });
    const answered = await fetch(`${server.url}/human-requests/ask%3Aask%230/answer`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ action: "answer", value: ANSWER_SECRET }),
    });
    const answerText = await answered.text();
    expect(answered.status).toBe(200);
    expectHidden(answerText);
    expect(await engine.handle("ask").result({ timeoutMs: 20_000 })).toEqual({ code: ANSWER_SECRET, right: true });
    const text = await views("ask");
    expectHidden(text);
    const entry = (await engine.journal("ask")).find((e) => e.kind === "human.answered");
    expect((entry?.data as { answer: { value: unknown } }).answer.value).toBe("[redacted]");
  });

  it("a secret in an error message is redacted in step.failed, run.failed and the run row", async () => {
    const { engine, views, expectHidden } = await setup();
    await engine.start(leaky, null, { runId: "leak" });
    await waitFor(async () => (await engine.getRun("leak")).status === "failed", { timeoutMs: 20_000 });
    const text = await views("leak");
    expectHidden(text);
    expect(text).toContain("login failed with [redacted]");
    expect((await engine.getRun("leak")).error?.message).toContain("[redacted]");
  });

  it("GET /runs?q= searches what the caller sees: a secret quoted in an error is not found by any prefix, other words are", async () => {
    const { engine, get } = await setup();
    await engine.start(leaky, null, { runId: "leak" });
    await waitFor(async () => (await engine.getRun("leak")).status === "failed", { timeoutMs: 20_000 });
    const found = async (q: string) =>
      (JSON.parse((await get(`/runs?q=${encodeURIComponent(q)}`)).text) as { runs: { runId: string }[] }).runs.map((r) => r.runId);
    // Every prefix of the secret (as an attacker would probe it) that is not a word the view shows
    // ("err" is in "Error: login failed with [redacted]"), and the whole of it, in any case.
    for (let n = 4; n <= ERROR_SECRET.length; n++) expect(await found(ERROR_SECRET.slice(0, n)), ERROR_SECRET.slice(0, n)).toEqual([]);
    expect(await found(ERROR_SECRET.toUpperCase())).toEqual([]);
    expect(await found(`with ${ERROR_SECRET.slice(0, 4)}`)).toEqual([]);
    // What the view shows is found.
    expect(await found("login failed")).toEqual(["leak"]);
    expect(await found("LEAK")).toEqual(["leak"]);
    expect((await engine.listRuns({ q: ERROR_SECRET.slice(0, 6) })).runs).toEqual([]);
  });

  it("a secret tool's arguments and output are redacted in the model call, the tool step, loop snapshots and the agent's result", async () => {
    const { engine, views, expectHidden } = await setup();
    const handle = await engine.start(payer, { prompt: "pay it" }, { runId: "pay" });
    const result = (await handle.result({ timeoutMs: 20_000 })) as { text: string; messages: unknown[] };
    expect(result.text).toBe("paid");
    expect(JSON.stringify(result.messages)).toContain(TOOL_ARG_SECRET); // the agent itself saw the real values
    expect(JSON.stringify(result.messages)).toContain(TOOL_OUT_SECRET);
    const text = await views("pay");
    expectHidden(text);
    const journal = await engine.journal("pay");
    const model = journal.find((e) => e.kind === "step.completed" && e.opKey?.endsWith("/model#0"));
    expect(JSON.stringify(model?.data)).toContain('"input":"[redacted]"');
    const tool = journal.find((e) => e.kind === "step.completed" && e.opKey?.includes("tool-"));
    expect((tool?.data as { result: unknown }).result).toBe("[redacted]");
  });
}
