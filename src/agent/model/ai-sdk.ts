/**
 * Adapter for any Vercel AI SDK language model (the `LanguageModelV2`/`V3`/`V4` specifications of
 * `@ai-sdk/provider`, what `ai` calls a `LanguageModel`): calls `model.doStream` (when deltas are
 * wanted) or `model.doGenerate` directly, once per call: the AI SDK's own retries live in `generateText`,
 * which Cairn does not use, so the step's retry policy is the only retry layer.
 */
import { fromAiSdkResult, toAiSdkCallOptions, type GenerateResult } from "./ai-sdk-mapping.js";
import { readAiSdkStream } from "./ai-sdk-stream.js";
import { deltaSink } from "./delta.js";
import { checkRequest } from "./messages.js";
import { classifyProviderError } from "./provider-errors.js";
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
  doStream?(options: any): PromiseLike<{ stream: ReadableStream<unknown> }>;
}

/** Options of {@link aiSdkModel}. */
export interface AiSdkModelOptions {
  /** Extra call options merged into every `doGenerate` call, e.g. `{ providerOptions: { anthropic: { thinking: { type: "enabled", budgetTokens: 2048 } } } }`. */
  callOptions?: Record<string, unknown>;
  /** Call `doStream` when the caller listens for deltas (the agent loop always does) and the model has it. Default true. */
  stream?: boolean;
  /**
   * Keep the provider's response (its body, headers, metadata) in `raw`, and so in the journal.
   * Default false: `raw` holds only the parts Cairn does not map (files, sources, provider-executed tools).
   */
  keepRaw?: boolean;
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
      const emit = options.stream === false || !languageModel.doStream ? undefined : deltaSink(request);
      const call = toAiSdkCallOptions(request, options);
      try {
        const result = emit
          ? await readAiSdkStream((await languageModel.doStream!(call)).stream, emit)
          : ((await languageModel.doGenerate(call)) as GenerateResult);
        return fromAiSdkResult(result, languageModel.modelId, options.keepRaw === true);
      } catch (error) {
        throw classifyProviderError(error, `ai-sdk:${languageModel.provider}`, languageModel.modelId, request.signal);
      }
    },
  };
}
