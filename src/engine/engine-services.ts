import { serializeError } from "../core/serialize.js";
import type { Store } from "../core/store.js";
import type { QueueLimits } from "../core/flow-control.js";
import { Committer } from "./committer.js";
import { CredentialBroker, credentialProviders } from "./credentials.js";
import type { EventRegistry } from "./define-event.js";
import { DEFAULT_MAX_RECOVERY_ATTEMPTS, type EngineOptions } from "./engine.js";
import { EngineOperations } from "./engine-operations.js";
import { HumanRequests } from "./human-requests.js";
import { LiveDeltaPublisher } from "./live-publisher.js";
import { consoleLogger } from "./logger.js";
import { ObserverHub } from "./observer-hub.js";
import { OutboxRegistry } from "./outbox-registry.js";
import { RunControl } from "./run-control.js";
import { RunCreator } from "./run-creator.js";
import { RunStarter } from "./run-starter.js";
import { RunViews } from "./run-views.js";
import { ScheduleService } from "./schedule-service.js";
import { SecretViews } from "./secret-views.js";
import { WorkerPool } from "./worker-pool.js";
import type { WorkflowRegistry } from "./workflow-registry.js";

/** The services an engine hands its calls to, wired once from its options (see {@link wireEngineServices}). */
export interface EngineServices {
  /** This engine's workers' live deltas, for streams in other processes. */
  livePublisher: LiveDeltaPublisher;
  outbox: OutboxRegistry;
  schedules: ScheduleService;
  observers: ObserverHub;
  credentials: CredentialBroker | undefined;
  pool: WorkerPool;
  views: RunViews;
  starter: RunStarter;
  control: RunControl;
  humans: HumanRequests;
  ops: EngineOperations;
}

/** What an engine's services need of the engine itself: its public calls, which check it is open. */
export interface EngineCallbacks {
  /** The engine's `cancel` (it also revokes the run's credentials). */
  cancel(runId: string, reason: string): Promise<unknown>;
  /** The engine's `start`, for schedules. */
  start(workflow: string, input: unknown, runId: string): Promise<void>;
  /** The engine's `sendEvent`, for starts that send an event. */
  sendEvent(runId: string, type: string, payload: unknown, options: { eventId: string }): Promise<unknown>;
}

/** What {@link wireEngineServices} builds the services from. */
export interface EngineWiring {
  store: Store;
  workflows: WorkflowRegistry;
  clock: () => number;
  instanceId: string;
  options: EngineOptions;
  queues: readonly QueueLimits[];
  events: EventRegistry;
}

/** Builds the services of an engine from its options, with their defaults. */
export function wireEngineServices(wiring: EngineWiring, engine: EngineCallbacks): EngineServices {
  const { store, workflows, clock, instanceId, options, queues, events } = wiring;
  const maxPayloadBytes = options.maxPayloadBytes ?? 4 * 1024 * 1024;
  const maxRecoveryAttempts = options.maxRecoveryAttempts ?? DEFAULT_MAX_RECOVERY_ATTEMPTS;
  const logger = options.logger ?? consoleLogger();
  const cancel = (runId: string, reason: string) => engine.cancel(runId, reason);
  const observers = new ObserverHub(logger, options.observer);
  const livePublisher = new LiveDeltaPublisher(store, instanceId, clock, (error) =>
    logger.log("warn", "live deltas could not reach other processes' streams; their catch-up is resent", { error: serializeError(error) }),
  );
  const start = (workflow: string, input: unknown, runId: string) => engine.start(workflow, input, runId);
  const schedules = new ScheduleService(
    { store, clock, logger, start, workflowNames: () => workflows.names() },
    { enabled: options.scheduler?.enabled ?? true, pollMs: options.scheduler?.pollMs ?? 1000, leaseMs: options.scheduler?.leaseMs ?? 10_000 },
  );
  const outbox = new OutboxRegistry(options.outbox);
  const providers = credentialProviders(options.credentials);
  const credentials = providers.size > 0 ? new CredentialBroker(providers, store, clock, logger) : undefined;
  const pool = new WorkerPool({
    ...(credentials ? { credentials } : {}),
    ...{ store, clock, logger, maxPayloadBytes, queues, cancel, outbox, observers, schedules },
    committer: new Committer(store, clock),
    workflows: workflows.byKey,
    maxRecoveryAttempts: maxRecoveryAttempts === 0 ? undefined : maxRecoveryAttempts,
    retention: options.retention,
    deadlinePollMs: options.deadlines?.pollMs ?? 1000,
    live: livePublisher,
  });
  const views = new RunViews(store, new SecretViews(store));
  const sendEvent = (runId: string, type: string, payload: unknown, opts: { eventId: string }) => engine.sendEvent(runId, type, payload, opts);
  return {
    livePublisher,
    outbox,
    schedules,
    observers,
    credentials,
    pool,
    views,
    starter: new RunStarter({ store, clock, pool, workflows, queues, events, cancel, sendEvent, creator: new RunCreator(store, clock) }),
    control: new RunControl({ store, clock, pool, views, workflows, maxPayloadBytes, cancel }),
    ops: new EngineOperations({ store, clock, pool, workflows, queues }),
    humans: new HumanRequests({ store, clock, views, observers, notify: (runId) => pool.notify(runId) }),
  };
}
