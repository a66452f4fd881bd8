/**
 * Adapter for the official Anthropic SDK (`@anthropic-ai/sdk`), Messages API.
 */
import type Anthropic from "@anthropic-ai/sdk";
import { fromAnthropicMessage, toAnthropicParams } from "./anthropic-mapping.js";
import { ModelSdkMissingError } from "./errors.js";
import { checkRequest } from "./messages.js";
import { deltaSink } from "./delta.js";
import { classifyProviderError } from "./provider-errors.js";
import { readAnthropicStream } from "./anthropic-stream.js";
import type { Model } from "./model.js";

/**
 * The part of an `Anthropic` client the adapter uses. A real `new Anthropic()` fits; so does a fake in tests.
 * Typed structurally so that `cairn/agent`'s declarations do not require the SDK to be installed.
 */
export interface AnthropicClientLike {
  messages: {
    create(params: any, options?: { signal?: AbortSignal; maxRetries?: number }): PromiseLike<unknown>;
  };
}

/** Options of {@link anthropicModel}. */
export interface AnthropicModelOptions {
  /** Model id, e.g. `claude-sonnet-4-5`. */
  model: string;
  /** A client instance. When absent one is built with `apiKey` (or `ANTHROPIC_API_KEY`) on first use. */
  client?: AnthropicClientLike;
  /** API key for the client built on first use. Default: `process.env.ANTHROPIC_API_KEY`. */
  apiKey?: string;
  /** `max_tokens` when the request gives none (Anthropic requires one). Default 4096. */
  defaultMaxTokens?: number;
  /**
   * Extra `messages.create` parameters merged into every request, e.g.
   * `{ thinking: { type: "enabled", budget_tokens: 2048 } }` or `{ metadata: { user_id } }`.
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
 * A {@link Model} backed by Anthropic's Messages API.
 *
 * @example
 * ```ts
 * import Anthropic from "@anthropic-ai/sdk";
 * const model = anthropicModel({ model: "claude-sonnet-4-5", client: new Anthropic() });
 * const model2 = anthropicModel({ model: "claude-haiku-4-5" }); // builds a client from ANTHROPIC_API_KEY on first call
 * ```
 */
export function anthropicModel(options: AnthropicModelOptions): Model {
  let client: Promise<AnthropicClientLike> | undefined = options.client ? Promise.resolve(options.client) : undefined;
  const getClient = () =>
    (client ??= buildClient(options.apiKey).catch((error: unknown) => {
      client = undefined; // a later call may succeed once the SDK is installed
      throw error;
    }));
  return {
    provider: "anthropic",
    modelId: options.model,
    async generate(request) {
      checkRequest(request);
      const params = toAnthropicParams(request, options);
      const emit = options.stream === false ? undefined : deltaSink(request);
      // One retry layer: the step's policy retries, so the SDK's own retries are off for every request.
      const requestOptions = request.signal ? { signal: request.signal, maxRetries: 0 } : { maxRetries: 0 };
      try {
        const sdk = await getClient();
        const answer = emit
          ? await readAnthropicStream((await sdk.messages.create({ ...params, stream: true }, requestOptions)) as AsyncIterable<never>, emit)
          : await sdk.messages.create(params, requestOptions);
        return fromAnthropicMessage(answer as never, options.keepRaw === true);
      } catch (error) {
        throw classifyProviderError(error, "anthropic", options.model, request.signal);
      }
    },
  };
}

async function buildClient(apiKey: string | undefined): Promise<AnthropicClientLike> {
  let Sdk: typeof Anthropic;
  try {
    Sdk = (await import("@anthropic-ai/sdk")).default;
  } catch (cause) {
    throw new ModelSdkMissingError("@anthropic-ai/sdk", { cause });
  }
  return new Sdk(apiKey === undefined ? { maxRetries: 0 } : { apiKey, maxRetries: 0 });
}
