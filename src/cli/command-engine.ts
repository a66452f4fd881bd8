import type { RetentionPolicy } from "../core/retention-schemas.js";
import { createEngine } from "../engine/create-engine.js";
import type { Engine } from "../engine/engine.js";
import type { Workflow } from "../engine/workflow.js";
import { defined, type StoreOptions } from "./context.js";
import { loadModuleEngineOptions } from "./load-schedules.js";
import { otelFromEnv } from "./otel-env.js";

/** Options of the commands that host workers (`worker`, `serve`, `dev`) that shape their engine. */
export interface HostingOptions extends StoreOptions {
  workflows?: string[];
  maxRecoveryAttempts?: number;
}

/**
 * The engine of a command that hosts workers: the store, the workflows, what the `--workflows`
 * modules export (schedules, queues, outbox handlers, dead-letter limit), OpenTelemetry when
 * `CAIRN_OTEL=1`, the `--max-recovery-attempts` flag and an optional retention policy.
 */
export async function createHostingEngine(options: HostingOptions, workflows: Workflow<any, any>[], retention?: RetentionPolicy): Promise<Engine> {
  return createEngine({
    store: options.store,
    workflows,
    ...(await loadModuleEngineOptions(options.workflows)),
    ...(await otelFromEnv()),
    ...defined({ maxRecoveryAttempts: options.maxRecoveryAttempts }),
    ...(retention ? { retention } : {}),
  });
}
