import { ValidationError } from "../../core/errors.js";
import { newEntry, type EntryData, type NewEntry, type OpKind } from "../../core/journal.js";
import { crashPoint } from "../crash-points.js";
import { checkEmit, emitEntry, emitMismatch, type EmitOptions, type EmittedMessage } from "../emit.js";
import { checkLiveName, journalable, publishEntry, replyEntry, serveRequests } from "../live-ops.js";
import type { Scope } from "../replay/op-keys.js";
import type { WorkflowContext } from "../workflow.js";
import type { OpScheduler } from "./op-scheduler.js";

const noop = () => {};

/** An op whose only effect is its entry (publish, reply): journaled once, delivered in journal order. */
function journalOnce(exec: OpScheduler, scope: Scope, name: string, kind: OpKind, make: (key: string) => NewEntry): Promise<void> {
  const key = exec.issue(scope, name, kind);
  return exec.awaitOp<void>(key, async () => exec.commitOutcome(key, [make(key)], { ok: true, value: undefined }, () => crashPoint("after-reply", key)));
}

/** `ctx.emit`: a message for the outbox, journaled once; on replay the outcome comes from the journal. */
export function emit(exec: OpScheduler, scope: Scope, topic: string, payload: unknown, options?: EmitOptions): Promise<EmittedMessage> {
  const checked = checkEmit(topic, payload, options, exec.hostRef.maxPayloadBytes);
  const key = exec.issue(scope, checked.name, "emit");
  const mismatch = emitMismatch(key, exec.replay.journal.first(key), checked.topic);
  if (mismatch) {
    exec.failNonDeterminism(mismatch);
    throw mismatch;
  }
  return exec.awaitOp<EmittedMessage>(key, async () => {
    const entry = emitEntry(exec.runId, key, checked);
    exec.commitOutcome(key, [entry], { ok: true, value: { messageId: entry.data.messageId } });
  });
}

/** `ctx.publish`: a live value readers see (engine/live-ops.ts). */
export function publish(exec: OpScheduler, scope: Scope, name: string, value: unknown): Promise<void> {
  const checked = checkLiveName(name, "ctx.publish");
  const copy = journalable(value, exec.hostRef.maxPayloadBytes, `ctx.publish("${checked}"): the value`);
  return journalOnce(exec, scope, `publish:${checked}`, "publish", (key) => publishEntry(key, checked, copy));
}

/** `ctx.handle`: serves requests to the run; each reply is journaled once (engine/live-ops.ts). */
export function handle(exec: OpScheduler, scope: Scope, ctx: WorkflowContext, name: string, fn: unknown): void {
  const checked = checkLiveName(name, "ctx.handle");
  if (typeof fn !== "function") throw new ValidationError(`ctx.handle("${checked}") needs a handler function.`);
  if (scope.prefix !== "") throw new ValidationError(`ctx.handle("${checked}"): register handlers outside ctx.loop iterations.`);
  const reply: Parameters<typeof serveRequests>[3] = (requestId, outcome) =>
    journalOnce(exec, scope, `reply:${checked}`, "request", (key) => replyEntry(key, checked, requestId, outcome));
  serveRequests(ctx, checked, fn as (payload: unknown) => unknown, reply, exec.hostRef.maxPayloadBytes);
}

/** `ctx.now` / `ctx.random` / `ctx.uuid`: made once, journaled, and read back from the journal on replay. */
export function value(exec: OpScheduler, scope: Scope, name: string, make: () => unknown): unknown {
  const key = exec.issue(scope, name, "value");
  const recorded = exec.replay.journal.first(key)?.data as EntryData["value.recorded"] | undefined;
  if (recorded) return recorded.value;
  const made = make();
  exec.write([newEntry("value.recorded", key, { value: made })]).catch(noop);
  return made;
}

/** The agent's `agent.messages` op (engine/agent-rows.ts): journaled once, nothing to wait for; on replay the entry stands. */
export function agentMessages(exec: OpScheduler, scope: Scope, name: string, data: EntryData["agent.messages"]): void {
  const key = exec.issue(scope, name, "messages");
  if (exec.replay.journal.first(key)) return;
  exec.write([newEntry("agent.messages", key, data)]).catch(noop);
}
