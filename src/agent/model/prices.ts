/**
 * The price table shipped with Cairn: USD per million tokens, by kind, for current Anthropic and
 * OpenAI models. Versioned: a run records the version it was priced with, and budgets are folds of
 * journaled costs, so changing this table never re-prices past calls.
 *
 * Sources: the providers' published pricing pages as of `effectiveDate`. Not covered: batch
 * discounts, long-context (>200K prompt) surcharges, regional (`inference_geo`) multipliers, 1-hour
 * cache writes (priced here at the 5-minute rate), priority/flex tiers. Override any entry with the
 * `prices` option of `costOf`.
 */

/** Prices of one model in USD per million tokens. Reasoning tokens are billed as `output`. */
export interface ModelPrice {
  /** Fresh (uncached) prompt tokens. */
  input: number;
  /** Generated tokens, reasoning included. */
  output: number;
  /** Prompt tokens read from the provider's cache. */
  cacheRead: number;
  /** Prompt tokens written to the provider's cache (Anthropic's 5-minute rate; OpenAI does not bill writes separately). */
  cacheWrite: number;
}

/** A versioned price table. */
export interface PriceTable {
  /** Changes whenever any price changes; recorded in a run's manifest. */
  version: string;
  /** The date (YYYY-MM-DD) the prices were checked against the providers' pages. */
  effectiveDate: string;
  /** Always USD. */
  currency: "USD";
  /** Prices by exact model id (without date suffix). */
  models: Readonly<Record<string, Readonly<ModelPrice>>>;
}

const anthropic = (input: number, output: number, cacheRead: number, cacheWrite: number): ModelPrice => ({ input, output, cacheRead, cacheWrite });
// OpenAI bills no cache writes; they are never reported, and would be billed as fresh input if they were.
const openai = (input: number, cacheRead: number, output: number): ModelPrice => ({ input, output, cacheRead, cacheWrite: input });

/** The table Cairn ships. */
export const PRICE_TABLE: PriceTable = {
  version: "2026-11-22.1",
  effectiveDate: "2026-11-22",
  currency: "USD",
  models: {
    // ── Anthropic ── input, output, cache read, 5-minute cache write
    "claude-fable-5-1": anthropic(10, 50, 0.25, 12.5),
    "claude-mythos-5-1": anthropic(10, 50, 0.25, 12.5),
    "claude-fable-5": anthropic(10, 50, 1, 12.5),
    "claude-mythos-5": anthropic(10, 50, 1, 12.5),
    "claude-opus-5": anthropic(5, 25, 0.5, 6.25),
    "claude-opus-4-8": anthropic(5, 25, 0.5, 6.25),
    "claude-opus-4-7": anthropic(5, 25, 0.5, 6.25),
    "claude-opus-4-6": anthropic(5, 25, 0.5, 6.25),
    "claude-opus-4-5": anthropic(5, 25, 0.5, 6.25),
    "claude-opus-4-1": anthropic(15, 75, 1.5, 18.75),
    "claude-opus-4-0": anthropic(15, 75, 1.5, 18.75),
    "claude-opus-4": anthropic(15, 75, 1.5, 18.75),
    "claude-sonnet-5": anthropic(2, 10, 0.2, 2.5),
    "claude-sonnet-4-6": anthropic(3, 15, 0.3, 3.75),
    "claude-sonnet-4-5": anthropic(3, 15, 0.3, 3.75),
    "claude-sonnet-4-0": anthropic(3, 15, 0.3, 3.75),
    "claude-sonnet-4": anthropic(3, 15, 0.3, 3.75),
    "claude-3-7-sonnet": anthropic(3, 15, 0.3, 3.75),
    "claude-haiku-4-5": anthropic(1, 5, 0.1, 1.25),
    "claude-3-5-haiku": anthropic(0.8, 4, 0.08, 1),
    "claude-3-haiku": anthropic(0.25, 1.25, 0.03, 0.3),
    // ── OpenAI ── input, cached input, output
    "gpt-5.5": openai(5, 0.5, 30),
    "gpt-5.4": openai(2.5, 0.25, 15),
    "gpt-5.4-mini": openai(0.75, 0.075, 4.5),
    "gpt-5.4-nano": openai(0.2, 0.02, 1.25),
    "gpt-5.2": openai(1.75, 0.175, 14),
    "gpt-5.1": openai(1.25, 0.125, 10),
    "gpt-5": openai(1.25, 0.125, 10),
    "gpt-5-mini": openai(0.25, 0.025, 2),
    "gpt-5-nano": openai(0.05, 0.005, 0.4),
    "gpt-4.1": openai(2, 0.5, 8),
    "gpt-4.1-mini": openai(0.4, 0.1, 1.6),
    "gpt-4.1-nano": openai(0.1, 0.025, 0.4),
    "gpt-4o": openai(2.5, 1.25, 10),
    "gpt-4o-mini": openai(0.15, 0.075, 0.6),
    o3: openai(2, 0.5, 8),
    "o4-mini": openai(1.1, 0.275, 4.4),
    // ── Cairn ── the ScriptedModel costs nothing
    scripted: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  },
};
