/**
 * Picks a real model from the environment, so examples and `npm start` use a provider when a key is
 * present and the scripted model otherwise.
 */
import { ValidationError } from "../../core/errors.js";
import { anthropicModel } from "./anthropic.js";
import type { Model } from "./model.js";
import { openaiModel } from "./openai.js";

/** The Anthropic model used when only `ANTHROPIC_API_KEY` is set. */
export const DEFAULT_ANTHROPIC_MODEL = "claude-sonnet-4-6";
/** The OpenAI model used when only `OPENAI_API_KEY` is set. */
export const DEFAULT_OPENAI_MODEL = "gpt-5-mini";

/**
 * A model for the provider whose API key is in `env`, or `null` when there is none.
 *
 * - `CAIRN_MODEL=anthropic:<id>` or `openai:<id>` picks the provider and model (a bare id starting
 *   with `claude-` means Anthropic, any other bare id OpenAI); `null` if that provider's key is missing.
 * - Otherwise `ANTHROPIC_API_KEY` wins over `OPENAI_API_KEY`, with {@link DEFAULT_ANTHROPIC_MODEL} /
 *   {@link DEFAULT_OPENAI_MODEL}.
 *
 * The SDK client is built on the first call, so this needs neither the network nor the SDK installed.
 *
 * @example
 * ```ts
 * const model = modelFromEnv() ?? new ScriptedModel(script);
 * ```
 * @throws ValidationError when `CAIRN_MODEL` names an unknown provider.
 */
export function modelFromEnv(env: Record<string, string | undefined> = process.env): Model | null {
  const anthropicKey = env["ANTHROPIC_API_KEY"] || undefined;
  const openaiKey = env["OPENAI_API_KEY"] || undefined;
  const wanted = env["CAIRN_MODEL"]?.trim();
  if (wanted) {
    const colon = wanted.indexOf(":");
    const provider = colon >= 0 ? wanted.slice(0, colon) : wanted.startsWith("claude-") ? "anthropic" : "openai";
    const model = colon >= 0 ? wanted.slice(colon + 1) : wanted;
    if (!model)
      throw new ValidationError(`CAIRN_MODEL="${wanted}" names no model. Use e.g. "anthropic:${DEFAULT_ANTHROPIC_MODEL}" or "openai:${DEFAULT_OPENAI_MODEL}".`);
    if (provider === "anthropic") return anthropicKey ? anthropicModel({ model, apiKey: anthropicKey }) : null;
    if (provider === "openai") return openaiKey ? openaiModel({ model, apiKey: openaiKey }) : null;
    throw new ValidationError(`CAIRN_MODEL="${wanted}": unknown provider "${provider}". Use "anthropic:<model>" or "openai:<model>".`);
  }
  if (anthropicKey) return anthropicModel({ model: DEFAULT_ANTHROPIC_MODEL, apiKey: anthropicKey });
  if (openaiKey) return openaiModel({ model: DEFAULT_OPENAI_MODEL, apiKey: openaiKey });
  return null;
}
