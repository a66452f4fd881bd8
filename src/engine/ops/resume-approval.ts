import { toMs } from "../../core/duration.js";
import { CairnError, ValidationError } from "../../core/errors.js";
import { decode } from "../../core/serialize.js";
import type { EntryData, JournalEntry } from "../../core/journal.js";
import { opKey } from "../../core/journal.js";
import type { Scope } from "../replay/op-keys.js";
import type { ResumeApproval } from "../workflow.js";
import type { OpScheduler, ResumedAs } from "./op-scheduler.js";
import { askHuman } from "./ask-human.js";

/** A step that needed fresh approval was refused (or its question timed out): docs/errors/APPROVAL_REFUSED.md. */
export class ApprovalRefusedError extends CairnError {
  constructor(
    readonly opKey: string,
    reason: string,
  ) {
    super("APPROVAL_REFUSED", `Step "${opKey}" needed a fresh approval before it ran, and ${reason}. It did not run.`);
    this.name = "ApprovalRefusedError";
  }
}

/** Reads how this execution took the run out of the entries a resume loads (the latest claim is this execution's). */
export function resumedAs(entries: readonly JournalEntry[]): ResumedAs {
  for (let i = entries.length - 1; i >= 0; i--) {
    const entry = entries[i]!;
    if (entry.kind !== "run.claimed") continue;
    const claim = decode<EntryData["run.claimed"]>(entry.payload);
    const before = entries[i - 1];
    return {
      recovered: claim.from === "running",
      sleptMs: claim.from === "suspended" && before ? Math.max(0, entry.at - before.at) : 0,
    };
  }
  return { recovered: false, sleptMs: 0 };
}

/** Checks a step's `approval` option at the call; throws ValidationError naming what is wrong. */
export function checkApproval(name: string, approval: unknown): ResumeApproval {
  const where = `ctx.step("${name}"): approval`;
  if (!approval || typeof approval !== "object") throw new ValidationError(`${where} must be { onResume?, afterSleep?, question?, timeout? }.`);
  const given = approval as ResumeApproval;
  if (given.onResume !== undefined && typeof given.onResume !== "boolean") throw new ValidationError(`${where}.onResume must be true or false.`);
  for (const field of ["afterSleep", "timeout"] as const) {
    if (given[field] === undefined) continue;
    try {
      toMs(given[field]);
    } catch (error) {
      throw new ValidationError(`${where}.${field}: ${(error as Error).message}`);
    }
  }
  if (given.question !== undefined && (typeof given.question !== "string" || given.question.trim() === "")) {
    throw new ValidationError(`${where}.question must be a non-empty string.`);
  }
  if (!given.onResume && given.afterSleep === undefined)
    throw new ValidationError(`${where} needs onResume: true or an afterSleep duration (or leave it out).`);
  return given;
}

/**
 * The fresh-approval gate of a step about to be issued in `scope` under `name`: null when it needs
 * none; else the approval question's promise (a `ctx.askHuman` op keyed `approve:<name>@<k>`),
 * rejected with {@link ApprovalRefusedError} unless approved. Replayed from the journal when it was
 * asked before; asked live only for a step whose outcome is not journaled, when this execution
 * recovered the run after a crash or the run slept longer than `afterSleep`.
 */
export function approvalGate(exec: OpScheduler, scope: Scope, name: string, approval: ResumeApproval): Promise<void> | null {
  const occurrence = scope.counters.get(name) ?? 0;
  const stepKey = scope.prefix + opKey(name, occurrence);
  const gateName = `approve:${name}@${occurrence}`;
  const gateKey = scope.prefix + opKey(gateName, scope.counters.get(gateName) ?? 0);
  if (!exec.replay.journal.has(gateKey)) {
    if (exec.replay.deliveries.has(stepKey)) return null; // replayed: it ran (approved or not needed) before
    const why = reason(exec.resumedAs, approval);
    if (why === null) return null;
    return ask(exec, scope, gateName, stepKey, approval, why);
  }
  return ask(exec, scope, gateName, stepKey, approval, "");
}

function reason(resumed: ResumedAs, approval: ResumeApproval): string | null {
  if (approval.onResume && resumed.recovered) return "the run was recovered after its worker stopped";
  if (approval.afterSleep !== undefined && resumed.sleptMs > toMs(approval.afterSleep)) {
    return `the run slept ${Math.round(resumed.sleptMs / 1000)}s, longer than ${String(approval.afterSleep)}`;
  }
  return null;
}

async function ask(exec: OpScheduler, scope: Scope, gateName: string, stepKey: string, approval: ResumeApproval, why: string): Promise<void> {
  const reply = await askHuman<unknown>(exec, scope, {
    name: gateName,
    question: approval.question ?? `Run step "${stepKey}"? It needs a fresh approval: ${why || "the run resumed"}.`,
    options: ["approve", "refuse"],
    context: { step: stepKey, reason: why },
    ...(approval.timeout === undefined ? {} : { timeout: approval.timeout, onTimeout: { option: "refuse" } }),
  });
  if (reply.option === "approve") return;
  throw new ApprovalRefusedError(stepKey, reply.timedOut ? "nobody approved it in time" : `${reply.by ?? "a person"} refused it`);
}
