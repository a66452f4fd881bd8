/**
 * Adapter for any Vercel AI SDK language model (the `LanguageModelV2`/`V3`/`V4` specifications of
 * `@ai-sdk/provider`, what `ai` calls a `LanguageModel`): calls `model.doGenerate` directly.
 */
import { fromAiSdkResult, toAiSdkCallOptions, type GenerateResult } from "./ai-sdk-mapping.js";
import { checkRequest } from "./messages.js";
import type { Model } from "./model.js";

/**
 * The part of an AI SDK language model the adapter uses: what `@ai-sdk/anthropic`, `@ai-sdk/openai`
 * and every other provider package return (`anthropic("claude-sonnet-4-5")`). Typed structurally so
 * that `cairn/agent`'s declarations do not require the AI SDK to be installed.
 */
export interface AiSdkLanguageModelLike {
  readonly specificationVersion: "v2" | "v3" | "v4";
  readonly provider: string;
  readonly modelId: string;
  doGenerate(options: any): PromiseLike<unknown>;
}

/** Options of {@link aiSdkModel}. */
export interface AiSdkModelOptions {
  /** Extra call options merged into every `doGenerate` call, e.g. `{ providerOptions: { anthropic: { thinking: { type: "enabled", budgetTokens: 2048 } } } }`. */
  callOptions?: Record<string, unknown>;
}

/**
 * A {@link Model} backed by any AI SDK language model.
 *
 * @example
 * ```ts
 * import { anthropic } from "@ai-sdk/anthropic";
 * const model = aiSdkModel(anthropic("claude-sonnet-4-5"));
 * ```
 */
export function aiSdkModel(languageModel: AiSdkLanguageModelLike, options: AiSdkModelOptions = {}): Model {
  if (!["v2", "v3", "v4"].includes(languageModel.specificationVersion))
    throw new TypeError(`aiSdkModel supports LanguageModel specification v2, v3 and v4, not "${String(languageModel.specificationVersion)}".`);
  return {
    provider: `ai-sdk:${languageModel.provider}`,
    modelId: languageModel.modelId,
    async generate(request) {
      checkRequest(request);
      const result = (await languageModel.doGenerate(toAiSdkCallOptions(request, options))) as GenerateResult;
      return fromAiSdkResult(result, languageModel.modelId);
    },
  };
}
