import { CairnError } from "../core/errors.js";
import { costOf, priceFor, type CostOptions } from "./model/cost.js";
import { estimateCost } from "./model/estimate.js";
import type { ModelRequest } from "./model/model.js";
import type { Usage } from "./model/schemas.js";

/**
 * The cost of a call in micro-dollars, or `null` when the model has no price: such a call is counted
 * as a call of unknown cost (`unpricedCalls` in the totals), never as $0.
 */
export function knownCost(modelId: string, usage: Usage, options: CostOptions): number | null {
  return priceFor(modelId, options) ? costOf(modelId, usage, options) : null;
}

/** The worst-case estimate of a request's cost, or `null` when the model has no price. */
export function knownEstimate(modelId: string, request: Omit<ModelRequest, "signal">, options: CostOptions): number | null {
  return priceFor(modelId, options) ? estimateCost(modelId, request, options) : null;
}

/**
 * A cost limit cannot be kept for a model without a price: refused before any call, with the fix.
 * Without a cost limit the run goes ahead and reports those calls' cost as unknown.
 */
export class PriceRequiredError extends CairnError {
  readonly nonRetryable = true;
  constructor(
    readonly agent: string,
    readonly modelId: string,
  ) {
    super(
      "MODEL_PRICE_UNKNOWN",
      `Agent "${agent}" has a cost limit (budget maxCostUsd, tiers or a parent's limit), but model "${modelId}" has no price, so the limit cannot be kept. ` +
        `Give its price in defineAgent({ prices: { "${modelId}": { input: <USD per million input tokens>, output: <USD per million output tokens> } } }), or drop the cost limit (calls are then reported with unknown cost).`,
    );
  }
}

/** Throws {@link PriceRequiredError} when a cost-limited agent uses a model the price table and overrides do not know. */
export function requirePrices(agent: string, costLimited: boolean, modelIds: readonly string[], options: CostOptions): void {
  if (!costLimited) return;
  for (const modelId of modelIds) if (!priceFor(modelId, options)) throw new PriceRequiredError(agent, modelId);
}

/**
 * A model call was sent again and again without its response ever being journaled (the worker died
 * mid-call each time): each may have been billed, so the run stops re-sending it.
 */
export class ModelCallUnconfirmedError extends CairnError {
  readonly nonRetryable = true;
  constructor(
    readonly opKey: string,
    readonly sends: number,
    readonly possiblyBilledMicros: number | null,
    detail: string,
  ) {
    super(
      "MODEL_CALL_UNCONFIRMED",
      `${unconfirmedReason(opKey, sends, possiblyBilledMicros)} ${detail} Find out why the worker dies mid-call (memory, timeouts, deploys), then start a new run or fork this one.`,
    );
  }
}

/** Why the run stopped re-sending a model call: what a person is asked about and what the error says. */
export function unconfirmedReason(opKey: string, sends: number, possiblyBilledMicros: number | null): string {
  const billed = possiblyBilledMicros === null ? "an unknown amount (the model has no price)" : `about $${(possiblyBilledMicros / 1e6).toFixed(6)}`;
  return `Model call "${opKey}" was sent ${sends} times and no response was ever journaled (the worker stopped mid-call each time); the provider may have billed each one: ${billed} in all, counted as possibly billed.`;
}
