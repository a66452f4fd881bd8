// Time to first delta of a streamed model answer, through Cairn vs the provider SDK called directly,
// against the same local provider server (test/support/provider-server: OpenAI Responses and
// Anthropic Messages wire formats over real HTTP on 127.0.0.1, no network). For each SDK:
//   direct:  the SDK's streaming call → its first text event.
//   adapter: Cairn's adapter (`model.generate` with `onDelta`) on the same SDK client → the first delta.
//   agent:   an agent run on the store, from the provider receiving the request to the first
//            `step-progress` event at an engine observer (what the SSE stream forwards), vs the same
//            span for the direct call (request received → the SDK's first text event).
//   added:   without the network's noise, what Cairn itself adds: the adapter (the SDK yielding an
//            event → the adapter's onDelta, a tapped client) and the engine (the adapter's onDelta →
//            the observer's step-progress), in µs.
// Each figure is the median of `samples` calls per repetition; the case reports medians of repetitions.
import Anthropic from "@anthropic-ai/sdk";
import { createOpenAI } from "@ai-sdk/openai";
import OpenAI from "openai";
import { aiSdkModel, anthropicModel, defineAgent, openaiModel } from "../../dist/src/agent/index.js";
import { createEngine, silentLogger } from "../../dist/src/index.js";
import { ProviderServer } from "../../test/support/provider-server/index.mjs";
import { median } from "../lib/stats.mjs";

const TEXT = "Tides rise and fall twice a day because the moon pulls on the oceans of the earth.";
const now = () => performance.timeOrigin + performance.now();
const MESSAGES = [{ role: "user", content: "Why tides?" }];

function sdks(url) {
  const openai = new OpenAI({ apiKey: "k", baseURL: `${url}/v1`, maxRetries: 0 });
  const anthropic = new Anthropic({ apiKey: "k", baseURL: url, maxRetries: 0 });
  const aiOpenai = createOpenAI({ apiKey: "k", baseURL: `${url}/v1` });
  const openaiTap = { responses: { create: async (p, o) => tapped(await openai.responses.create(p, o)) } };
  const anthropicTap = { messages: { create: async (p, o) => tapped(await anthropic.messages.create(p, o)) } };
  const aiTap = (lm) => Object.assign(Object.create(lm), { doStream: async (o) => tappedParts(await lm.doStream(o)) });
  return {
    openai: {
      tapped: () => openaiModel({ model: "gpt-bench", client: openaiTap }),
      model: () => openaiModel({ model: "gpt-bench", client: openai }),
      async direct(onFirst) {
        const stream = await openai.responses.create({ model: "gpt-bench", input: "Why tides?", stream: true });
        for await (const event of stream) if (event.type === "response.output_text.delta") onFirst();
      },
    },
    anthropic: {
      tapped: () => anthropicModel({ model: "claude-bench", client: anthropicTap }),
      model: () => anthropicModel({ model: "claude-bench", client: anthropic }),
      async direct(onFirst) {
        const stream = await anthropic.messages.create({ model: "claude-bench", max_tokens: 256, messages: MESSAGES, stream: true });
        for await (const event of stream) if (event.type === "content_block_delta") onFirst();
      },
    },
    "ai-sdk": {
      tapped: () => aiSdkModel(aiTap(aiOpenai.responses("gpt-bench"))),
      model: () => aiSdkModel(aiOpenai.responses("gpt-bench")),
      async direct(onFirst) {
        const { stream } = await aiOpenai.responses("gpt-bench").doStream({ prompt: [{ role: "user", content: [{ type: "text", text: "Why tides?" }] }] });
        const reader = stream.getReader();
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          if (value.type === "text-delta") onFirst();
        }
      },
    },
  };
}

/** When the SDK last handed an event to its consumer (set by the taps below). */
const tap = { at: 0 };

/** An SDK stream that notes when it yields each event. */
async function* tapped(stream) {
  for await (const event of stream) {
    tap.at = now();
    yield event;
  }
}

/** An AI SDK stream result whose reader notes when it yields each part. */
function tappedParts(result) {
  const reader = result.stream.getReader();
  const stream = new ReadableStream({
    async pull(controller) {
      const { done, value } = await reader.read();
      if (done) return controller.close();
      tap.at = now();
      controller.enqueue(value);
    },
  });
  return { ...result, stream };
}

/** Runs `call(onFirst)` and returns ms from `from()` (default: the call) to the first onFirst. */
async function timeFirst(call, from) {
  let first;
  const t0 = now();
  await call(() => (first ??= now()));
  return first - (from ? from() : t0);
}

export async function modelStreamCase(url, { samples, reps, onProgress }) {
  const server = await new ProviderServer({ respond: () => ({ text: TEXT, usage: { input: 12, output: 20 } }) }).start();
  const clients = sdks(server.url);
  const prices = { "gpt-bench": { input: 0, output: 0 }, "claude-bench": { input: 0, output: 0 } };
  // The agent's model notes when its adapter hands a delta on, so the engine's part can be told apart.
  const handed = { at: 0 };
  const noting = (model) => ({
    provider: model.provider,
    modelId: model.modelId,
    generate: (request) =>
      model.generate({
        ...request,
        onDelta: (delta) => {
          handed.at = now();
          request.onDelta?.(delta);
        },
      }),
  });
  const agents = Object.fromEntries(Object.entries(clients).map(([name, c]) => [name, defineAgent({ name: `bench-stream-${name}`, model: noting(c.model()), prices })]));
  const engine = await createEngine({ store: url, workflows: Object.values(agents), logger: silentLogger });
  const firstProgress = new Map();
  engine.observe((event) => {
    if (event.type === "step-progress") firstProgress.get(`wait:${event.runId}`)?.({ at: now(), handed: handed.at });
  });
  engine.startWorker({ pollInterval: 5 });
  const metrics = {};
  const record = (key, value) => (metrics[key] ??= []).push(value);
  try {
    for (let rep = 1; rep <= reps; rep++) {
      for (const [name, c] of Object.entries(clients)) {
        onProgress(`rep ${rep}/${reps}: ${name}`);
        const model = c.model();
        const tappedModel = c.tapped();
        const adapterAdded = [];
        const engineAdded = [];
        const direct = [];
        const adapter = [];
        const directFromServer = [];
        const agent = [];
        for (let i = 0; i < samples + 3; i++) {
          const warm = i < 3;
          // Interleaved, so drift in machine load affects both sides alike.
          const d = await timeFirst((f) => c.direct(f));
          const a = await timeFirst((f) => model.generate({ messages: MESSAGES, onDelta: f }));
          const n = server.requests.length;
          const ds = await timeFirst(
            (f) => c.direct(f),
            () => server.requests[n].at,
          );
          const runId = `stream-${name}-${rep}-${i}`;
          const progressed = new Promise((resolve) => firstProgress.set(`wait:${runId}`, resolve));
          const before = server.requests.length;
          await engine.start(agents[name], { prompt: "Why tides?" }, { runId });
          const { at, handed: handedAt } = await progressed;
          firstProgress.delete(`wait:${runId}`);
          // The adapter's own time: from the SDK yielding an event to the adapter's onDelta.
          let added;
          await tappedModel.generate({ messages: MESSAGES, onDelta: () => (added ??= now() - tap.at) });
          await engine.result(runId, { timeoutMs: 30_000 });
          const received = server.requests.slice(before).find((r) => r.stream)?.at;
          if (warm) continue;
          direct.push(d);
          adapter.push(a);
          directFromServer.push(ds);
          agent.push(at - received);
          adapterAdded.push(added * 1000);
          engineAdded.push((at - handedAt) * 1000);
        }
        record(`${name}.directMs`, median(direct));
        record(`${name}.adapterMs`, median(adapter));
        record(`${name}.adapterOverheadMs`, median(adapter) - median(direct));
        record(`${name}.directFromServerMs`, median(directFromServer));
        record(`${name}.agentFromServerMs`, median(agent));
        record(`${name}.agentOverheadMs`, median(agent) - median(directFromServer));
        record(`${name}.adapterAddedUs`, median(adapterAdded));
        record(`${name}.engineAddedUs`, median(engineAdded));
      }
    }
  } finally {
    await engine.close();
    await server.close();
  }
  return { samples: metrics, callsPerRepetition: samples };
}
