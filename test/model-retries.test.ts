// One retry layer: an agent on a real SDK client (its own retries at their default) against a local
// provider server. The server's request ledger counts what each kind of failure costs.
import { describe, expect, it } from "vitest";
import { defineAgent } from "../src/agent/agent.js";
import type { Model } from "../src/agent/model/model.js";
import { testEngine } from "./support/engines.js";
import { sdkModels, useProviderServer } from "./support/sdk-models.js";

const server = useProviderServer();

const { anthropic, openai, "ai-sdk": aiSdk } = sdkModels(server);
const MODELS: Record<string, () => Model> = { anthropic, openai, "ai-sdk": aiSdk };
const prices = { "claude-test": { input: 1, output: 1 }, "gpt-test": { input: 1, output: 1 } };

async function run(name: string, runId: string) {
  const agent = defineAgent({ name: `retry-${name}`, model: MODELS[name]!, prices, retry: { maxAttempts: 3, initialDelay: "20ms", maxDelay: "10s" } });
  const engine = await testEngine("memory", { workflows: [agent] });
  engine.startWorker({ pollInterval: 10 });
  const before = server.requests.length;
  await engine.start(agent, { prompt: "hello" }, { runId });
  const outcome = await engine.result(runId, { timeoutMs: 20_000 }).then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error: error as Error }),
  );
  return { outcome, requests: server.requests.slice(before) };
}

describe.each(Object.keys(MODELS))("%s: provider failures under the step's retry policy", (name) => {
  it("a 400 costs exactly one request and fails the run with the provider's message", async () => {
    server.enqueue({ status: 400, message: "messages: roles must alternate" }, { text: "never sent" });
    const { outcome, requests } = await run(name, `bad-${name}`);
    expect(requests).toHaveLength(1);
    expect(outcome.ok).toBe(false);
    expect(String((outcome as { error: Error }).error.message)).toContain("messages: roles must alternate");
  });

  it("a 500 costs exactly maxAttempts requests (3), not the SDK's retries times Cairn's", async () => {
    server.enqueue({ status: 500 }, { status: 500 }, { status: 500 }, { text: "never sent" });
    const { outcome, requests } = await run(name, `down-${name}`);
    expect(requests).toHaveLength(3);
    expect(outcome.ok).toBe(false);
  });

  it("a 429 with Retry-After waits that long before the next request, then succeeds", async () => {
    server.enqueue({ status: 429, headers: { "retry-after": "1" }, message: "slow down" }, { text: "Hello there." });
    const { outcome, requests } = await run(name, `limited-${name}`);
    expect(outcome.ok).toBe(true);
    expect(requests).toHaveLength(2);
    const gap = requests[1]!.at - requests[0]!.at;
    // The policy's own back-off is 20 ms; the provider asked for 1 s.
    expect(gap).toBeGreaterThanOrEqual(950);
    expect(gap).toBeLessThan(5_000);
  });
});
