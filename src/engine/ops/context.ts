import { randomUUID } from "node:crypto";
import { eventName, type EventDefinition } from "../define-event.js";
import type { Scope } from "../replay/op-keys.js";
import type { RunEnd } from "../run-end.js";
import type { WaitOptions, Workflow, WorkflowContext, WorkflowLogger } from "../workflow.js";
import { acquire } from "./acquire.js";
import { credential } from "./credential.js";
import { askHuman } from "./ask-human.js";
import { child } from "./child.js";
import { agentMessages, emit, handle, publish, value } from "./journal-once.js";
import { registerAgentRowOps } from "../agent-rows.js";
import type { Loops } from "./loop.js";
import type { OpScheduler } from "./op-scheduler.js";
import { sleep } from "./sleep.js";
import { searchJournal, step } from "./step.js";
import { waitForEvent } from "./wait-for-event.js";

/** What a workflow context is made of: the execution's ops, loops and run end. */
export interface ContextParts {
  readonly exec: OpScheduler;
  readonly workflow: Workflow<any, any>;
  readonly loops: Loops;
  readonly ending: RunEnd;
  /** True while journaled outcomes are still being replayed (logs are quiet then). */
  replaying(): boolean;
  /** The workflow's own context (`ctx.handle` serves requests through it). */
  root(): WorkflowContext;
}

/** The `ctx` workflow code gets in a scope (the workflow's, or a loop iteration's): each method one op of engine/ops/. */
export function workflowContext(parts: ContextParts, scope: Scope): WorkflowContext {
  const { exec, workflow, loops, ending } = parts;
  const host = exec.hostRef;
  const log = (level: "debug" | "info" | "warn" | "error") => (message: string, fields?: Record<string, unknown>) => {
    if (!parts.replaying()) host.logger.log(level, message, { runId: exec.runId, workflow: workflow.name, ...fields });
  };
  const logger: WorkflowLogger = { debug: log("debug"), info: log("info"), warn: log("warn"), error: log("error") };
  const ctx: WorkflowContext = {
    runId: exec.runId,
    workflow: workflow.name,
    version: workflow.version,
    get replaying() {
      return parts.replaying();
    },
    log: logger,
    step: (name, fn, options) => step(exec, scope, name, fn, options),
    sleep: (name, duration) => sleep(exec, scope, name, duration, undefined),
    sleepUntil: (name, until) => sleep(exec, scope, name, undefined, until),
    waitForEvent: (type: string | EventDefinition, options?: WaitOptions) => waitForEvent(exec, scope, eventName(type), options),
    child: (childWorkflow, input, options) => child(exec, scope, childWorkflow, input, options),
    loop: (name, initial, body, options) => loops.loop(scope, name, initial, body, options),
    askHuman: (request) => askHuman(exec, scope, request),
    emit: (topic, payload, options) => emit(exec, scope, topic, payload, options),
    searchJournal: (query, options) => searchJournal(exec, scope, query, options),
    compensate: (reason) => ending.requestCompensation(reason),
    acquire: (name, resource) => acquire(exec, scope, name, resource),
    credential: (name, options) => credential(exec, scope, name, options),
    publish: (name, published) => publish(exec, scope, name, published),
    handle: (name, fn) => handle(exec, scope, parts.root(), name, fn),
    continueAsNew: (input) => ending.continueAsNew(input),
    now: (name = "now") => new Date(value(exec, scope, name, () => host.clock()) as number),
    random: (name = "random") => value(exec, scope, name, () => Math.random()) as number,
    uuid: (name = "uuid") => value(exec, scope, name, () => randomUUID()) as string,
  };
  registerAgentRowOps(ctx, {
    append: (name, data) => agentMessages(exec, scope, name, data),
    // In flight, so the run is not taken for quiescent (nor its journal for unreached) while the read is out.
    read: (fromSeq, throughSeq) => exec.inFlight(() => host.store.readAgentMessages(exec.runId, { fromSeq, throughSeq })),
  });
  return ctx;
}
