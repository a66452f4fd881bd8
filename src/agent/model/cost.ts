/**
 * Money for model calls, in integer micro-dollars (1 USD = 1 000 000). No floats are summed: prices
 * are converted exactly to integer pico-dollars per token and multiplied as bigints; the total is
 * rounded up to the next micro-dollar.
 */
import { z } from "zod";
import { ValidationError } from "../../core/errors.js";
import { UnknownModelPriceError } from "./errors.js";
import { PRICE_TABLE, type ModelPrice, type PriceTable } from "./prices.js";
import type { Usage } from "./schemas.js";

const price = z
  .number()
  .nonnegative()
  .finite()
  .refine((n) => Number.isInteger(Math.round(n * 1e6)) && Math.abs(n * 1e6 - Math.round(n * 1e6)) < 1e-6, "at most 6 decimal places");

/** A user-supplied price: `input` and `output` are required; cache prices default to `input` (no discount assumed). */
export const ModelPriceOverrideSchema = z.object({ input: price, output: price, cacheRead: price.optional(), cacheWrite: price.optional() });
/** See {@link ModelPriceOverrideSchema}. */
export type ModelPriceOverride = z.infer<typeof ModelPriceOverrideSchema>;

/** Options of {@link costOf} and {@link priceFor}. */
export interface CostOptions {
  /** Prices by model id that take precedence over the table (USD per million tokens). */
  prices?: Record<string, ModelPriceOverride>;
  /** The table to use. Default: the shipped {@link PRICE_TABLE}. */
  table?: PriceTable;
}

/**
 * The ids to try for a model, most specific first: as given, then without a `provider/` or
 * Bedrock `anthropic.` prefix, a Vertex `@date` or `-YYYYMMDD` / `-YYYY-MM-DD` / `-latest` / `-v1:0`
 * suffix, with dots as dashes for Claude ids (`claude-sonnet-4.5`).
 */
export function priceKeys(modelId: string): string[] {
  const keys = [modelId];
  let id = modelId.toLowerCase();
  id = id.slice(id.lastIndexOf("/") + 1).replace(/^anthropic\./, "");
  keys.push(id);
  id = id
    .replace(/@.*$/, "")
    .replace(/-v\d+(:\d+)?$/, "")
    .replace(/-(\d{8}|\d{4}-\d{2}-\d{2}|latest)$/, "");
  if (id.startsWith("claude-")) id = id.replace(/\./g, "-");
  keys.push(id);
  return [...new Set(keys)];
}

/** The price of a model (override first, then table), or `undefined` when unknown. */
export function priceFor(modelId: string, options: CostOptions = {}): ModelPrice | undefined {
  const table = options.table ?? PRICE_TABLE;
  for (const key of priceKeys(modelId)) {
    const override = options.prices?.[key];
    if (override) {
      const parsed = ModelPriceOverrideSchema.safeParse(override);
      if (!parsed.success)
        throw new ValidationError(`Invalid price override for "${key}": ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}.`);
      const p = parsed.data;
      return { input: p.input, output: p.output, cacheRead: p.cacheRead ?? p.input, cacheWrite: p.cacheWrite ?? p.input };
    }
  }
  for (const key of priceKeys(modelId)) {
    const entry = table.models[key];
    if (entry) return entry;
  }
  return undefined;
}

/** USD per million tokens → pico-dollars (1e-12 USD) per token, exactly, via the decimal text of the number. */
function picoPerToken(usdPerMillion: number): bigint {
  const [whole = "0", fraction = ""] = usdPerMillion.toFixed(6).split(".");
  return BigInt(whole) * 1_000_000n + BigInt(fraction.padEnd(6, "0"));
}

/**
 * The cost of one call's usage in integer micro-dollars, rounded up. Reasoning tokens are part of
 * `outputTokens` and are not billed twice.
 *
 * @example
 * ```ts
 * costOf("claude-sonnet-4-5-20250929", { inputTokens: 1000, outputTokens: 500, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 });
 * // 10500  ($0.0105: 1000 × $3/M + 500 × $15/M)
 * ```
 * @throws UnknownModelPriceError when neither the overrides nor the table price the model: an unknown
 * model is refused, not counted as free, so a cost budget cannot be escaped by a typo.
 */
export function costOf(modelId: string, usage: Usage, options: CostOptions = {}): number {
  const p = priceFor(modelId, options);
  if (!p) throw new UnknownModelPriceError(modelId, (options.table ?? PRICE_TABLE).version);
  const pico =
    BigInt(usage.inputTokens) * picoPerToken(p.input) +
    BigInt(usage.outputTokens) * picoPerToken(p.output) +
    BigInt(usage.cacheReadTokens) * picoPerToken(p.cacheRead) +
    BigInt(usage.cacheWriteTokens) * picoPerToken(p.cacheWrite);
  return Number((pico + 999_999n) / 1_000_000n);
}

/** Formats micro-dollars as a USD string with 6 decimals, e.g. `$0.010500`. For display only. */
export function formatMicroUsd(micro: number): string {
  const sign = micro < 0 ? "-" : "";
  const abs = Math.abs(Math.trunc(micro));
  return `${sign}$${Math.floor(abs / 1_000_000)}.${String(abs % 1_000_000).padStart(6, "0")}`;
}
