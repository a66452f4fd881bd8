import type { StepFlowOptions } from "../core/step-flow.js";
import { isCairnError, type StepFailedError } from "../core/errors.js";
import type { RetryPolicy, WorkflowContext } from "../engine/workflow.js";
import { BudgetExceededError, spentMicros, type AgentTotals, type ResolvedBudget } from "./budget.js";
import type { CostOptions } from "./model/cost.js";
import { textOf } from "./model/messages.js";
import type { Model, ModelRequest, ModelResponse } from "./model/model.js";
import type { JsonValue } from "./model/schemas.js";
import { knownCost, ModelCallUnconfirmedError, unconfirmedReason } from "./spend.js";

/** A model that failed before the one that answered, as journaled with the answer. */
export interface FailedModel {
  /** Its model id. */
  model: string;
  /** The error code (`MODEL_PROVIDER_FAILED`) and message of its last attempt. */
  code?: string;
  error: string;
}

/**
 * A model call's journaled result: the response, what it cost (`null`: the model has no price), and
 * the estimated cost of earlier sends of the same call that never got a journaled response. When a
 * fallback model answered, `answeredBy` names it and `fallbackFrom` lists the models that failed first.
 */
export type ModelCall = ModelResponse & {
  costMicros: number | null;
  possiblyBilledMicros?: number;
  /** The model id the call was sent to and priced by, when a fallback answered (else the primary). */
  answeredBy?: string;
  /** The models that failed (after their retries) before `answeredBy` answered, in order. */
  fallbackFrom?: FailedModel[];
};

/** What a model step journals when it refused to send the request again. */
interface Halted {
  halted: "unconfirmed" | "budget";
  unconfirmed: number;
  possiblyBilledMicros: number;
}

/** How many sends of one model call may go without a journaled response, and what happens then. */
export interface UnconfirmedCallsOptions {
  /** Sends without a journaled response after which the run stops re-sending. Default 3. */
  max?: number;
  /** Ask a person whether to send it again (default), or fail the run at once. */
  onLimit?: "ask" | "fail";
}

/** One model a call may be sent to, with the worst-case estimate of one send (`null`: no price). */
export interface ModelCandidate {
  model: Model;
  estimatedCost: number | null;
}

/** What {@link callModel} needs besides the context. */
export interface ModelCallPlan {
  model: Model;
  request: Omit<ModelRequest, "signal">;
  /** The worst-case estimate of one send (`null`: the model has no price). */
  estimatedCost: number | null;
  /**
   * Models tried in order when the one before failed with a retryable provider failure
   * (`MODEL_PROVIDER_FAILED`: 5xx, 429, 408, 409, network) after all its retries. A rejected request
   * (`MODEL_REQUEST_REJECTED`: 400, 401, 403, 404, 422) fails the call at once: another model would
   * most likely reject it too, and it is a bug to fix, not an outage to ride out.
   */
  fallbacks?: ModelCandidate[];
  costOptions: CostOptions;
  retry: RetryPolicy;
  budget: ResolvedBudget;
  totals: AgentTotals;
  unconfirmed: Required<UnconfirmedCallsOptions>;
  /** Marks what the journal must redact in the response (secret tools' arguments). */
  seal: (call: ModelCall) => ModelCall;
  /** Rate and concurrency limits of the call, given the model it goes to (`defineAgent({ modelFlow })`). */
  flow?: StepFlowOptions | ((model: Model) => StepFlowOptions);
  /** The step's name. Default `model` (the context summary uses `summarize`). */
  name?: string;
  /** More fields for the step's intent (e.g. a summary's provenance). */
  intent?: Record<string, JsonValue>;
}

/** True when a model step's final failure is an outage another model may ride out. */
function fallbackWorthy(failure: unknown): failure is StepFailedError {
  return isCairnError(failure, "STEP_FAILED") && (failure as StepFailedError).failure.code === "MODEL_PROVIDER_FAILED";
}

/**
 * Calls the model as a journaled step. A send whose response was never journaled (the worker died
 * mid-call) is counted as possibly billed at its estimate, and charged against the cost limit before
 * the request is sent again; after `unconfirmed.max` such sends the step stops re-sending: a person
 * decides (`resend` / `stop`) or the run fails with the reason. What a resent call may have cost is
 * returned with it, so the totals (a fold of the journal) count it.
 *
 * With `fallbacks`, a primary that fails for good with a retryable provider failure is followed by a
 * new step for the next model (its intent names the model and the one that failed): each model gets
 * the whole retry policy, the journal records which one answered, and a replay returns that answer
 * without sending anything.
 */
export async function callModel(ctx: WorkflowContext, plan: ModelCallPlan): Promise<ModelCall> {
  const name = plan.name ?? "model";
  const candidates: ModelCandidate[] = [{ model: plan.model, estimatedCost: plan.estimatedCost }, ...(plan.fallbacks ?? [])];
  const failed: FailedModel[] = [];
  let possiblyBilled = 0;
  let candidate = 0;
  for (let round = 0; ; round++) {
    const { model, estimatedCost } = candidates[candidate]!;
    const before = possiblyBilled;
    const flow = typeof plan.flow === "function" ? plan.flow(model) : plan.flow;
    const failedSoFar = [...failed];
    let outcome: ModelCall | Halted;
    try {
      outcome = await ctx.step<ModelCall | Halted>(
        name,
        async ({ signal, progress, unconfirmed }) => {
          const billed = unconfirmed * (estimatedCost ?? 0);
          if (unconfirmed >= plan.unconfirmed.max) return { halted: "unconfirmed", unconfirmed, possiblyBilledMicros: billed };
          if (
            plan.budget.maxCostMicros !== null &&
            estimatedCost !== null &&
            spentMicros(plan.totals) + before + billed + estimatedCost > plan.budget.maxCostMicros
          )
            return { halted: "budget", unconfirmed, possiblyBilledMicros: billed };
          // Partial text, thinking and tool arguments go to live views as they come (never journaled): the response is the truth.
          const response = await model.generate({ ...plan.request, signal, onDelta: progress });
          const call: ModelCall = { ...response, costMicros: knownCost(model.modelId, response.usage, plan.costOptions) };
          if (billed > 0) call.possiblyBilledMicros = billed;
          if (failedSoFar.length > 0) Object.assign(call, { answeredBy: model.modelId, fallbackFrom: failedSoFar });
          return plan.seal(call);
        },
        {
          retry: plan.retry,
          ...flow,
          intent: {
            ...plan.intent,
            model: model.modelId,
            estimatedCostMicros: estimatedCost,
            ...(failedSoFar.length > 0 ? { fallbackFrom: failedSoFar as unknown as JsonValue } : {}),
          },
          searchText: (response) => ("halted" in response ? "" : textOf(response.content)),
        },
      );
    } catch (failure) {
      if (candidate + 1 >= candidates.length || !fallbackWorthy(failure)) throw failure;
      failed.push({ model: model.modelId, code: failure.failure.code!, error: failure.failure.message.slice(0, 500) });
      ctx.log.warn(`model ${model.modelId} failed after its retries; falling back to ${candidates[candidate + 1]!.model.modelId}`, {
        error: failure.failure.message.slice(0, 500),
      });
      candidate += 1;
      continue;
    }
    possiblyBilled += outcome.possiblyBilledMicros ?? 0;
    if (!("halted" in outcome)) return possiblyBilled > 0 ? { ...outcome, possiblyBilledMicros: possiblyBilled } : outcome;
    const totals: AgentTotals = { ...plan.totals, possiblyBilledMicros: (plan.totals.possiblyBilledMicros ?? 0) + possiblyBilled };
    if (outcome.halted === "budget") throw new BudgetExceededError("maxCostUsd", plan.budget.maxCostMicros! / 1e6, totals, estimatedCost! / 1e6);
    const opKey = `${name}#${round}`;
    const billedInAll = estimatedCost === null ? null : outcome.possiblyBilledMicros;
    if (plan.unconfirmed.onLimit === "fail")
      throw new ModelCallUnconfirmedError(opKey, outcome.unconfirmed, billedInAll, 'The agent\'s unconfirmedCalls.onLimit is "fail".');
    const reply = await ctx.askHuman({
      name: `${name}-unconfirmed`,
      question: `${unconfirmedReason(opKey, outcome.unconfirmed, billedInAll)} Send it again (resend), or stop the run (stop)?`,
      options: ["resend", "stop"],
      context: { model: model.modelId, sends: outcome.unconfirmed, estimatedCostMicros: estimatedCost, possiblyBilledMicros: billedInAll },
    });
    if (reply.option !== "resend") throw new ModelCallUnconfirmedError(opKey, outcome.unconfirmed, billedInAll, `${reply.by ?? "A person"} chose to stop.`);
  }
}
