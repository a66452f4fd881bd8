import { describe, expect, it } from "vitest";
import { DEFAULT_ANTHROPIC_MODEL, DEFAULT_OPENAI_MODEL, modelFromEnv } from "./from-env.js";

describe("modelFromEnv", () => {
  it("returns null without keys", () => {
    expect(modelFromEnv({})).toBeNull();
    expect(modelFromEnv({ ANTHROPIC_API_KEY: "" })).toBeNull();
  });

  it("prefers Anthropic, then OpenAI, with default models", () => {
    expect(modelFromEnv({ ANTHROPIC_API_KEY: "k", OPENAI_API_KEY: "k" })).toMatchObject({ provider: "anthropic", modelId: DEFAULT_ANTHROPIC_MODEL });
    expect(modelFromEnv({ OPENAI_API_KEY: "k" })).toMatchObject({ provider: "openai", modelId: DEFAULT_OPENAI_MODEL });
  });

  it("honours CAIRN_MODEL, returning null when that provider has no key", () => {
    const env = { ANTHROPIC_API_KEY: "a", OPENAI_API_KEY: "o" };
    expect(modelFromEnv({ ...env, CAIRN_MODEL: "openai:gpt-4.1" })).toMatchObject({ provider: "openai", modelId: "gpt-4.1" });
    expect(modelFromEnv({ ...env, CAIRN_MODEL: "claude-haiku-4-5" })).toMatchObject({ provider: "anthropic", modelId: "claude-haiku-4-5" });
    expect(modelFromEnv({ OPENAI_API_KEY: "o", CAIRN_MODEL: "anthropic:claude-haiku-4-5" })).toBeNull();
    expect(() => modelFromEnv({ ...env, CAIRN_MODEL: "mistral:large" })).toThrow(/unknown provider "mistral"/);
  });

  it("builds the real SDK client lazily, on the first call only", async () => {
    const model = modelFromEnv({ ANTHROPIC_API_KEY: "test-key" });
    // The first call builds a real client; abort it before any byte is sent so no network is needed.
    const controller = new AbortController();
    controller.abort();
    await expect(model!.generate({ messages: [{ role: "user", content: "hi" }], signal: controller.signal })).rejects.toThrow();
  });
});
