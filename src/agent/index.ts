/**
 * `cairn/agent`: the agent layer. For now, the model layer: a provider-neutral model interface,
 * adapters for the Anthropic SDK, the OpenAI SDK (Responses API) and any Vercel AI SDK language model,
 * a scripted model for tests, a versioned price table and token/cost estimates.
 * @packageDocumentation
 */
export * from "./model/index.js";
