/**
 * Adapter for the official OpenAI SDK (`openai`), Responses API.
 */
import type OpenAI from "openai";
import { ModelSdkMissingError } from "./errors.js";
import { checkRequest } from "./messages.js";
import { deltaSink } from "./delta.js";
import { classifyProviderError } from "./provider-errors.js";
import { readOpenAIStream } from "./openai-stream.js";
import type { Model } from "./model.js";
import { fromOpenAIResponse, toOpenAIParams } from "./openai-mapping.js";

/**
 * The part of an `OpenAI` client the adapter uses. A real `new OpenAI()` fits; so does a fake in tests.
 * Typed structurally so that `cairn/agent`'s declarations do not require the SDK to be installed.
 */
export interface OpenAIClientLike {
  responses: {
    create(params: any, options?: { signal?: AbortSignal; maxRetries?: number }): PromiseLike<unknown>;
  };
}

/** Options of {@link openaiModel}. */
export interface OpenAIModelOptions {
  /** Model id, e.g. `gpt-5-mini`. */
  model: string;
  /** A client instance. When absent one is built with `apiKey` (or `OPENAI_API_KEY`) on first use. */
  client?: OpenAIClientLike;
  /** API key for the client built on first use. Default: `process.env.OPENAI_API_KEY`. */
  apiKey?: string;
  /**
   * Extra `responses.create` parameters merged into every request, e.g.
   * `{ reasoning: { effort: "low", summary: "auto" } }`, or
   * `{ store: false, include: ["reasoning.encrypted_content"] }` to keep reasoning stateless.
   */
  params?: Record<string, unknown>;
  /**
   * Stream responses when the caller listens for deltas (the agent loop always does). Default true;
   * false sends every request whole and reports no deltas.
   */
  stream?: boolean;
  /**
   * Keep the provider's whole response in `raw` (and so in the journal). Default false: `raw` holds
   * nothing (provider-hosted tool items are mapped to `hosted_tool` blocks), because the whole response echoes
   * the request (instructions, tools) and would make up most of each journaled model call.
   */
  keepRaw?: boolean;
}

/**
 * A {@link Model} backed by OpenAI's Responses API. Stateless: the whole transcript is sent each call
 * (no `previous_response_id`), because the transcript lives in Cairn's journal.
 *
 * @example
 * ```ts
 * import OpenAI from "openai";
 * const model = openaiModel({ model: "gpt-5-mini", client: new OpenAI(), params: { reasoning: { effort: "low" } } });
 * ```
 */
export function openaiModel(options: OpenAIModelOptions): Model {
  let client: Promise<OpenAIClientLike> | undefined = options.client ? Promise.resolve(options.client) : undefined;
  const getClient = () =>
    (client ??= buildClient(options.apiKey).catch((error: unknown) => {
      client = undefined; // a later call may succeed once the SDK is installed
      throw error;
    }));
  return {
    provider: "openai",
    modelId: options.model,
    async generate(request) {
      checkRequest(request);
      const params = toOpenAIParams(request, options);
      const emit = options.stream === false ? undefined : deltaSink(request);
      // One retry layer: the step's policy retries, so the SDK's own retries are off for every request.
      const requestOptions = request.signal ? { signal: request.signal, maxRetries: 0 } : { maxRetries: 0 };
      try {
        const sdk = await getClient();
        const answer = emit
          ? await readOpenAIStream((await sdk.responses.create({ ...params, stream: true }, requestOptions)) as AsyncIterable<never>, emit)
          : await sdk.responses.create(params, requestOptions);
        return fromOpenAIResponse(answer as never, options.keepRaw === true);
      } catch (error) {
        throw classifyProviderError(error, "openai", options.model, request.signal);
      }
    },
  };
}

async function buildClient(apiKey: string | undefined): Promise<OpenAIClientLike> {
  let Sdk: typeof OpenAI;
  try {
    Sdk = (await import("openai")).default;
  } catch (cause) {
    throw new ModelSdkMissingError("openai", { cause });
  }
  return new Sdk(apiKey === undefined ? { maxRetries: 0 } : { apiKey, maxRetries: 0 });
}
