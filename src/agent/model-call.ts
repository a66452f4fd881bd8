import type { StepFlowOptions } from "../core/step-flow.js";
import type { RetryPolicy, WorkflowContext } from "../engine/workflow.js";
import { BudgetExceededError, spentMicros, type AgentTotals, type ResolvedBudget } from "./budget.js";
import type { CostOptions } from "./model/cost.js";
import { textOf } from "./model/messages.js";
import type { Model, ModelRequest, ModelResponse } from "./model/model.js";
import { knownCost, ModelCallUnconfirmedError, unconfirmedReason } from "./spend.js";

/**
 * A model call's journaled result: the response, what it cost (`null`: the model has no price), and
 * the estimated cost of earlier sends of the same call that never got a journaled response.
 */
export type ModelCall = ModelResponse & { costMicros: number | null; possiblyBilledMicros?: number };

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

/** What {@link callModel} needs besides the context. */
export interface ModelCallPlan {
  model: Model;
  request: Omit<ModelRequest, "signal">;
  /** The worst-case estimate of one send (`null`: the model has no price). */
  estimatedCost: number | null;
  costOptions: CostOptions;
  retry: RetryPolicy;
  budget: ResolvedBudget;
  totals: AgentTotals;
  unconfirmed: Required<UnconfirmedCallsOptions>;
  /** Marks what the journal must redact in the response (secret tools' arguments). */
  seal: (call: ModelCall) => ModelCall;
  /** Rate and concurrency limits of the call (`defineAgent({ modelFlow })`). */
  flow?: StepFlowOptions;
}

/**
 * Calls the model as a journaled step. A send whose response was never journaled (the worker died
 * mid-call) is counted as possibly billed at its estimate, and charged against the cost limit before
 * the request is sent again; after `unconfirmed.max` such sends the step stops re-sending: a person
 * decides (`resend` / `stop`) or the run fails with the reason. What a resent call may have cost is
 * returned with it, so the totals (a fold of the journal) count it.
 */
export async function callModel(ctx: WorkflowContext, plan: ModelCallPlan): Promise<ModelCall> {
  const { model, request, estimatedCost, budget } = plan;
  let possiblyBilled = 0;
  for (let round = 0; ; round++) {
    const before = possiblyBilled;
    const outcome = await ctx.step<ModelCall | Halted>(
      "model",
      async ({ signal, progress, unconfirmed }) => {
        const billed = unconfirmed * (estimatedCost ?? 0);
        if (unconfirmed >= plan.unconfirmed.max) return { halted: "unconfirmed", unconfirmed, possiblyBilledMicros: billed };
        if (budget.maxCostMicros !== null && estimatedCost !== null && spentMicros(plan.totals) + before + billed + estimatedCost > budget.maxCostMicros)
          return { halted: "budget", unconfirmed, possiblyBilledMicros: billed };
        // Partial text, thinking and tool arguments go to live views as they come (never journaled): the response is the truth.
        const response = await model.generate({ ...request, signal, onDelta: progress });
        const call: ModelCall = { ...response, costMicros: knownCost(model.modelId, response.usage, plan.costOptions) };
        if (billed > 0) call.possiblyBilledMicros = billed;
        return plan.seal(call);
      },
      {
        retry: plan.retry,
        ...plan.flow,
        intent: { model: model.modelId, estimatedCostMicros: estimatedCost },
        searchText: (response) => ("halted" in response ? "" : textOf(response.content)),
      },
    );
    possiblyBilled += outcome.possiblyBilledMicros ?? 0;
    if (!("halted" in outcome)) return possiblyBilled > 0 ? { ...outcome, possiblyBilledMicros: possiblyBilled } : outcome;
    const totals: AgentTotals = { ...plan.totals, possiblyBilledMicros: (plan.totals.possiblyBilledMicros ?? 0) + possiblyBilled };
    if (outcome.halted === "budget") throw new BudgetExceededError("maxCostUsd", budget.maxCostMicros! / 1e6, totals, estimatedCost! / 1e6);
    const opKey = `model#${round}`;
    const billedInAll = estimatedCost === null ? null : outcome.possiblyBilledMicros;
    if (plan.unconfirmed.onLimit === "fail")
      throw new ModelCallUnconfirmedError(opKey, outcome.unconfirmed, billedInAll, 'The agent\'s unconfirmedCalls.onLimit is "fail".');
    const reply = await ctx.askHuman({
      name: "model-unconfirmed",
      question: `${unconfirmedReason(opKey, outcome.unconfirmed, billedInAll)} Send it again (resend), or stop the run (stop)?`,
      options: ["resend", "stop"],
      context: { model: model.modelId, sends: outcome.unconfirmed, estimatedCostMicros: estimatedCost, possiblyBilledMicros: billedInAll },
    });
    if (reply.option !== "resend") throw new ModelCallUnconfirmedError(opKey, outcome.unconfirmed, billedInAll, `${reply.by ?? "A person"} chose to stop.`);
  }
}
