// Deltas from each real SDK reach a run's SSE stream over real HTTP while the provider is still
// generating; a client that reconnects with Last-Event-ID, or connects mid-generation, first gets
// what the attempt produced so far (catchUp) and then the rest. Deltas are not journaled.
import Anthropic from "@anthropic-ai/sdk";
import { createOpenAI } from "@ai-sdk/openai";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defineAgent } from "../src/agent/agent.js";
import { aiSdkModel } from "../src/agent/model/ai-sdk.js";
import { anthropicModel } from "../src/agent/model/anthropic.js";
import type { Model } from "../src/agent/model/model.js";
import { openaiModel } from "../src/agent/model/openai.js";
import { CairnClient, type StreamDelta } from "../src/client/client.js";
import { parseSse, type SseEvent } from "../src/client/sse.js";
import { waitFor } from "../src/testing/wait-for.js";
import { testEngine } from "./support/engines.js";
import { ProviderServer } from "./support/provider-server/index.mjs";
import { testServer } from "./support/server.js";

let provider: ProviderServer;
beforeAll(async () => {
  provider = await new ProviderServer().start();
});
afterAll(() => provider.close());

const MODELS: Record<string, () => Model> = {
  anthropic: () => anthropicModel({ model: "claude-test", client: new Anthropic({ apiKey: "k", baseURL: provider.url }) }),
  openai: () => openaiModel({ model: "gpt-test", client: new OpenAI({ apiKey: "k", baseURL: `${provider.url}/v1` }) }),
  "ai-sdk": () => aiSdkModel(createOpenAI({ apiKey: "k", baseURL: `${provider.url}/v1` }).responses("gpt-test")),
};
const prices = { "claude-test": { input: 1, output: 1 }, "gpt-test": { input: 1, output: 1 } };
const TEXT = "Tides rise and fall twice a day because the moon pulls on the oceans.";

interface Delta {
  opKey: string;
  attempt: number;
  data: { kind: string; text: string };
  catchUp?: true;
}

/** Reads a raw SSE connection into `events` until `until` says stop (then disconnects). */
async function follow(url: string, headers: Record<string, string>, events: SseEvent[], until: (e: SseEvent) => boolean, abort: AbortController) {
  const res = await fetch(url, { headers, signal: abort.signal });
  try {
    for await (const event of parseSse(res.body!)) {
      events.push(event);
      if (until(event)) break;
    }
  } catch (error) {
    if (!abort.signal.aborted) throw error;
  }
  abort.abort();
}

const textOf = (events: SseEvent[]) =>
  events
    .filter((e) => e.event === "delta")
    .map((e) => JSON.parse(e.data) as Delta)
    .filter((d) => d.data.kind === "text");

describe.each(Object.keys(MODELS))("%s: live deltas in the run's stream", (name) => {
  it("arrive while the provider is generating, and a reconnect with Last-Event-ID catches up, then gets the rest", async () => {
    let release!: () => void;
    const hold = new Promise<void>((resolve) => (release = resolve));
    // The provider sends a few text pieces, then holds the rest until the test releases it.
    provider.enqueue({ text: TEXT, hold, holdAfter: 7, usage: { input: 30, output: 17 } });
    const agent = defineAgent({ name: `live-${name}`, model: MODELS[name]!, prices });
    const engine = await testEngine("memory", { workflows: [agent] });
    engine.startWorker({ pollInterval: 10 });
    const server = await testServer(engine);
    const runId = `live-${name}`;
    await engine.start(agent, { prompt: "Why tides?" }, { runId });
    const url = `${server.url}/runs/${runId}/stream`;

    // First connection: some deltas arrive while the provider is held; then the client drops.
    const first: SseEvent[] = [];
    await follow(url, {}, first, () => textOf(first).length >= 2, new AbortController());
    const seen = textOf(first);
    expect(seen.length).toBeGreaterThanOrEqual(2);
    expect(seen.every((d) => d.opKey.endsWith("/model#0") && d.attempt === 1)).toBe(true);
    const lastId = first.filter((e) => e.id !== undefined).at(-1)!.id!;
    expect(first.some((e) => e.event === "entry" && JSON.parse(e.data).kind === "step.completed" && JSON.parse(e.data).opKey.endsWith("/model#0"))).toBe(false);

    // Reconnect with Last-Event-ID while still held: the output so far comes first, marked catchUp.
    const second: SseEvent[] = [];
    const secondDone = follow(url, { "last-event-id": lastId }, second, (e) => e.event === "end", new AbortController());
    // A typed client connecting mid-generation gets the same.
    const typed: StreamDelta[] = [];
    const typedDone = new CairnClient({ baseUrl: server.url }).stream(runId, { onEntry: () => undefined, onDelta: (d) => void typed.push(d) });
    await waitFor(() => textOf(second).length > 0 && typed.length > 0, { timeoutMs: 10_000 });
    const catchUp = textOf(second)[0]!;
    expect(catchUp.catchUp).toBe(true);
    expect(TEXT.startsWith(catchUp.data.text)).toBe(true);
    expect(catchUp.data.text.length).toBeGreaterThanOrEqual(seen.map((d) => d.data.text).join("").length);
    expect((typed[0] as Delta).catchUp).toBe(true);

    release();
    await Promise.all([secondDone, typedDone]);
    // Catch-up plus the live rest is the whole text, once; then the journaled outcome.
    const texts = textOf(second);
    expect(texts.slice(1).every((d) => !d.catchUp)).toBe(true);
    expect(texts.map((d) => d.data.text).join("")).toBe(TEXT);
    const typedText = typed.map((d) => (d.data as { text: string }).text).join("");
    expect(typedText).toBe(TEXT);
    const entries = second
      .filter((e) => e.event === "entry")
      .map((e) => JSON.parse(e.data) as { seq: number; kind: string; opKey: string | null; data: unknown });
    expect(entries[0]!.seq).toBe(Number(lastId) + 1);
    const completed = entries.find((e) => e.kind === "step.completed" && e.opKey?.endsWith("/model#0"))!;
    expect((completed.data as { result: { content: { text: string }[]; usage: { outputTokens: number } } }).result.usage.outputTokens).toBe(17);
    // Deltas are not journaled: every entry that holds any of the text holds all of it.
    const journal = await engine.journal(runId);
    const withText = journal.filter((e) => JSON.stringify(e.data ?? null).includes("twice"));
    expect(withText.length).toBeGreaterThan(0);
    for (const entry of withText) expect(JSON.stringify(entry.data)).toContain(TEXT);
  });
});
