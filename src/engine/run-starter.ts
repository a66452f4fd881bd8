import { randomUUID } from "node:crypto";
import { RunConflictError, RunFinishedError, ValidationError } from "../core/errors.js";
import { debounceSchema, resolveFlow, type QueueLimits } from "../core/flow-control.js";
import { eventIdSchema, eventTypeSchema, runIdSchema as RUN_ID, runIdRefSchema as RUN_REF } from "../core/schemas.js";
import { secret } from "../core/secret.js";
import { encode } from "../core/serialize.js";
import type { Store } from "../core/store.js";
import { check } from "./check-input.js";
import { eventName, type EventDefinition, type EventRegistry } from "./define-event.js";
import type { StartOptions } from "./engine.js";
import { publish, type PublishResult } from "./event-triggers.js";
import { sendRequest, startExtras, type RequestOptions } from "./live-runs.js";
import type { RunCreator } from "./run-creator.js";
import type { WorkerPool } from "./worker-pool.js";
import type { WorkflowRegistry } from "./workflow-registry.js";
import type { Workflow } from "./workflow.js";

/** What starting runs and sending events need from the engine. */
export interface RunStarterDeps {
  store: Pick<Store, "debounceRun" | "sendEvent" | "createRuns" | "listRuns" | "getRun" | "getRunValue" | "readJournal">;
  clock: () => number;
  creator: RunCreator;
  pool: WorkerPool;
  workflows: WorkflowRegistry;
  queues: readonly QueueLimits[];
  events: EventRegistry;
  /** The engine's `cancel` (for an event's `cancelOn`). */
  cancel(runId: string, reason: string): Promise<unknown>;
  /** The engine's `sendEvent` (a request is delivered as an event). */
  sendEvent(runId: string, type: string, payload: unknown, options: { eventId: string }): Promise<unknown>;
}

/** What goes into a run: `engine.start`, `engine.sendEvent`, `engine.publishEvent` and `engine.request`. */
export class RunStarter {
  constructor(private readonly deps: RunStarterDeps) {}

  /** Creates (or finds) a run; resolves with its id and whether this call created it. */
  async start(workflow: Workflow<any, any> | string, input: unknown, options: StartOptions): Promise<{ runId: string; created: boolean }> {
    const { deps } = this;
    const definition = deps.workflows.resolve(workflow, options.version);
    const runId = options.runId === undefined ? randomUUID() : check(RUN_ID, options.runId, "start: runId");
    let encoded: string;
    try {
      encoded = encode(input);
    } catch (error) {
      throw new ValidationError(`start: input cannot be stored: ${(error as Error).message}`);
    }
    const flow = resolveFlow(options, definition.queue, deps.queues, "start");
    const extras = startExtras(options, deps.clock());
    if (options.debounce !== undefined) {
      if (options.runId !== undefined) throw new ValidationError("start: runId and debounce do not go together: a debounced start may join a run that exists.");
      const debounce = check(debounceSchema, options.debounce, "start: debounce");
      const now = deps.clock();
      const newRun = { runId, workflow: definition.name, version: definition.version, input: encoded, ...(flow ? { flow } : {}) };
      const { run, created } = await deps.store.debounceRun(newRun, debounce.key, now + debounce.period, now);
      return { runId: run.runId, created };
    }
    // A local worker with a free slot gets the run at creation, in the same transaction; a queued
    // run waits for a claim, which checks its queue's limits.
    const reserved = flow || extras.startAt !== undefined ? undefined : deps.pool.reserve(definition);
    let result: Awaited<ReturnType<RunCreator["create"]>>;
    try {
      const extra = flow ? { flow } : reserved ? { claimFor: reserved.claimFor } : {};
      result = await deps.creator.create({ runId, workflow: definition.name, version: definition.version, input: encoded, ...extra, ...extras });
    } catch (error) {
      reserved?.holder.adopt(undefined);
      throw error;
    }
    const { run, created } = result;
    reserved?.holder.adopt(created ? run : undefined);
    if (!created) {
      if (run.workflow !== definition.name) throw new RunConflictError(runId, `for workflow "${run.workflow}", not "${definition.name}"`);
      if (run.input !== encoded) throw new RunConflictError(runId, "with a different input");
    }
    if (!reserved) deps.pool.kick();
    return { runId, created };
  }

  /** Buffers an event in a run's inbox (idempotent by event id) and wakes the run. */
  async sendEvent(
    runId: string,
    typeOrEvent: string | EventDefinition,
    payload: unknown,
    options: { eventId?: string; secret?: boolean },
  ): Promise<{ eventId: string; duplicate: boolean }> {
    check(RUN_REF, runId, "sendEvent: runId");
    const type = check(eventTypeSchema, eventName(typeOrEvent), "sendEvent: type");
    const eventId = options.eventId === undefined ? randomUUID() : check(eventIdSchema, options.eventId, "sendEvent: eventId");
    payload = this.deps.events.check(typeOrEvent, payload);
    let encoded: string;
    try {
      encoded = encode(options.secret ? secret(payload) : payload);
    } catch (error) {
      throw new ValidationError(`sendEvent: payload cannot be stored: ${(error as Error).message}`);
    }
    const sent = await this.deps.store.sendEvent({ runId, type, eventId, payload: encoded }, this.deps.clock());
    const duplicate = sent.duplicate;
    // A run that continued as new passed the event on to the last run of its chain.
    if (!duplicate) this.deps.pool.notify(sent.runId ?? runId);
    return { eventId, duplicate };
  }

  /** Starts the runs an event type triggers (`on`) and cancels those it cancels (`cancelOn`). */
  async publishEvent(typeOrEvent: string | EventDefinition, payload: unknown, options: { eventId?: string }): Promise<PublishResult> {
    const { deps } = this;
    const type = check(eventTypeSchema, eventName(typeOrEvent), "publishEvent: type");
    const eventId = options.eventId === undefined ? randomUUID() : check(eventIdSchema, options.eventId, "publishEvent: eventId");
    const checked = deps.events.check(typeOrEvent, payload);
    try {
      encode(checked);
    } catch (error) {
      throw new ValidationError(`publishEvent: payload cannot be stored: ${(error as Error).message}`);
    }
    const result = await publish(
      {
        store: deps.store,
        clock: deps.clock,
        workflows: () => deps.workflows.current(),
        flowOf: (w) => resolveFlow({}, w.queue, deps.queues, "publishEvent"),
        cancel: (runId, reason) =>
          deps.cancel(runId, reason).then(
            () => true,
            (error: unknown) => (error instanceof RunFinishedError ? false : Promise.reject(error)),
          ),
      },
      type,
      checked,
      eventId,
    );
    if (result.runs.some((r) => r.created)) deps.pool.kick();
    return result;
  }

  /** Delivers a request to a run's `ctx.handle` handler and waits for its reply. */
  request<R>(runId: string, name: string, payload: unknown, options: RequestOptions | undefined): Promise<R> {
    const { store, clock, pool, sendEvent } = this.deps;
    const deps = { store, clock, sendEvent, waitForChange: (id: string, ms: number) => pool.waitForChange(id, ms) };
    return sendRequest<R>(deps, check(RUN_ID, runId, "request: runId"), name, payload, options);
  }
}
