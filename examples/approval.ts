/**
 * An approval workflow with escalation: ask the approver, wait up to 72 hours;
 * if nobody answers, escalate to the manager and wait up to 24 hours more;
 * if that also passes in silence, reject automatically.
 *
 * Both waits are durable timers: no worker holds the run while it waits, and a
 * timeout that falls due while every worker is down fires when one comes back.
 *
 * @example
 * await engine.start(approval, { request: "Buy 3 GPUs", approver: "ana", manager: "ben" }, { runId: "po-17" });
 * await engine.sendEvent("po-17", "approval", { approved: true, by: "ana" }, { eventId: "po-17:ana" });
 */
import { defineWorkflow, isCairnError } from "cairn";
import { recordEffect } from "./ledger.js";

/** Input of the approval workflow. */
export interface ApprovalInput {
  /** What is being approved, as the approver will read it. */
  request: string;
  approver: string;
  /** Who is asked when the approver does not answer within 72h. */
  manager: string;
}

/** What an approver sends as the `approval` event. */
export interface ApprovalAnswer {
  approved: boolean;
  /** Who answered; defaults to whoever was last asked. */
  by?: string;
}

/** What the approval workflow returns. `by` is `"auto"` when nobody answered in time. */
export interface ApprovalResult {
  decision: "approved" | "rejected";
  by: string;
  escalated: boolean;
}

/** A stand-in notifier (e-mail, chat…): records the send in the example ledger. */
function notify(to: string, message: string, idempotencyKey: string): { to: string; message: string } {
  recordEffect(idempotencyKey);
  return { to, message };
}

async function waitForAnswer(wait: () => Promise<ApprovalAnswer>): Promise<ApprovalAnswer | "timeout"> {
  try {
    return await wait();
  } catch (error) {
    if (isCairnError(error, "TIMEOUT")) return "timeout";
    throw error;
  }
}

/** The approval workflow. */
export const approval = defineWorkflow({
  name: "approval",
  version: "1",
  async run(ctx, input: ApprovalInput): Promise<ApprovalResult> {
    await ctx.step("notify-approver", ({ idempotencyKey }) => notify(input.approver, `Please approve: ${input.request}`, idempotencyKey));

    const first = await waitForAnswer(() => ctx.waitForEvent<ApprovalAnswer>("approval", { timeout: "72h" }));
    if (first !== "timeout") {
      return { decision: first.approved ? "approved" : "rejected", by: first.by ?? input.approver, escalated: false };
    }

    ctx.log.info("no answer within 72h; escalating", { to: input.manager });
    await ctx.step("escalate", ({ idempotencyKey }) =>
      notify(input.manager, `${input.approver} did not answer within 72h. Please approve: ${input.request}`, idempotencyKey),
    );

    const second = await waitForAnswer(() => ctx.waitForEvent<ApprovalAnswer>("approval", { timeout: "24h" }));
    if (second !== "timeout") {
      return { decision: second.approved ? "approved" : "rejected", by: second.by ?? input.manager, escalated: true };
    }

    ctx.log.warn("no answer after escalation; rejecting automatically");
    return { decision: "rejected", by: "auto", escalated: true };
  },
});
