/**
 * The set-up every real-SDK test file shares: one local provider server per file (its scripted queue
 * emptied before each test), and Cairn's three adapters on the official SDK clients pointed at it.
 */
import Anthropic from "@anthropic-ai/sdk";
import { createOpenAI } from "@ai-sdk/openai";
import OpenAI from "openai";
import { afterAll, beforeAll, beforeEach } from "vitest";
import { aiSdkModel } from "../../src/agent/model/ai-sdk.js";
import { anthropicModel } from "../../src/agent/model/anthropic.js";
import type { Model } from "../../src/agent/model/model.js";
import { openaiModel } from "../../src/agent/model/openai.js";
import { ProviderServer } from "./provider-server/index.mjs";

/** A provider server for this test file: started before its tests, emptied before each, closed after. */
export function useProviderServer(): ProviderServer {
  const server = new ProviderServer();
  beforeAll(async () => {
    await server.start();
  });
  afterAll(() => server.close());
  beforeEach(() => {
    server.queue.length = 0;
  });
  return server;
}

/** The adapters on the real SDKs against `server`: model ids `claude-test` and `gpt-test`. */
export function sdkModels(server: ProviderServer) {
  return {
    anthropic: (): Model => anthropicModel({ model: "claude-test", client: new Anthropic({ apiKey: "k", baseURL: server.url }) }),
    openai: (): Model => openaiModel({ model: "gpt-test", client: new OpenAI({ apiKey: "k", baseURL: `${server.url}/v1` }) }),
    "ai-sdk": (): Model => aiSdkModel(createOpenAI({ apiKey: "k", baseURL: `${server.url}/v1` }).responses("gpt-test")),
    "ai-sdk chat": (): Model => aiSdkModel(createOpenAI({ apiKey: "k", baseURL: `${server.url}/v1` }).chat("gpt-test")),
  };
}
