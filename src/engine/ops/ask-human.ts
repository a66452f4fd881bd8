import { checkAskHuman, runAskHuman } from "../ask-human.js";
import type { Scope } from "../replay/op-keys.js";
import type { AskHumanRequest, HumanReply } from "../workflow.js";
import type { OpScheduler } from "./op-scheduler.js";

/** `ctx.askHuman`: a question for a person, answered through the inbox (engine/ask-human.ts). */
export function askHuman<T>(exec: OpScheduler, scope: Scope, request: AskHumanRequest): Promise<HumanReply<T>> {
  const checked = checkAskHuman(request);
  const key = exec.issue(scope, request.name ?? "ask", "human");
  return exec.awaitOp<HumanReply<T>>(key, () => runAskHuman(exec, key, checked));
}
