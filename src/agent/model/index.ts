/**
 * The model layer: a provider-neutral {@link Model} interface, adapters, a scripted model, prices and estimates.
 * @module
 */
export type { Model, ModelRequest, ModelResponse, ModelDelta } from "./model.js";
export { ModelProviderError, classifyProviderError, retryAfterMs } from "./provider-errors.js";
export * from "./schemas.js";
export { emptyUsage, addUsage, toolCallsOf, textOf, transcriptProblems, type TranscriptProblem } from "./messages.js";
export { anthropicModel, type AnthropicModelOptions, type AnthropicClientLike } from "./anthropic.js";
export { openaiModel, type OpenAIModelOptions, type OpenAIClientLike } from "./openai.js";
export { aiSdkModel, type AiSdkModelOptions, type AiSdkLanguageModelLike } from "./ai-sdk.js";
export { ScriptedModel, type ScriptedModelOptions, type ScriptedTurn, type ScriptedReply, type ScriptedTurnWithExpect } from "./scripted.js";
export { modelFromEnv, DEFAULT_ANTHROPIC_MODEL, DEFAULT_OPENAI_MODEL } from "./from-env.js";
export { PRICE_TABLE, type ModelPrice, type PriceTable } from "./prices.js";
export { costOf, priceFor, priceKeys, formatMicroUsd, ModelPriceOverrideSchema, type ModelPriceOverride, type CostOptions } from "./cost.js";
export { estimateTokens, estimateTextTokens, estimateContentTokens, estimateCost, DEFAULT_MAX_OUTPUT_TOKENS, type TokenEstimate } from "./estimate.js";
export { ScriptExhaustedError, ScriptMismatchError, UnknownModelPriceError, ModelSdkMissingError, ModelInputUnsupportedError } from "./errors.js";
export { generateObject, ModelOutputInvalidError, type GenerateObjectOptions, type GenerateObjectResult } from "./structured.js";
