import { z } from "zod";
import { ValidationError } from "../core/errors.js";
import { parseQueues, type QueueLimits } from "../core/flow-control.js";
import { check } from "./check-input.js";
import { EventRegistry } from "./define-event.js";
import type { EngineOptions } from "./engine.js";
import { parsePolicy } from "./retention.js";
import type { Schedule } from "./schedule.js";
import { ScheduleService } from "./schedule-service.js";
import { WorkflowRegistry } from "./workflow-registry.js";

const schedulerOptions = z
  .object({
    enabled: z.boolean().optional(),
    pollMs: z.number().int().min(10).max(60_000).optional(),
    leaseMs: z.number().int().min(100).max(3_600_000).optional(),
  })
  .strict();

/** What createEngine builds from its options before it opens the store. */
export interface CheckedEngineOptions {
  workflows: WorkflowRegistry;
  schedules: Schedule<unknown>[];
  queues: QueueLimits[];
  events: EventRegistry;
}

/** Checks createEngine's options (everything but the store and payloads), so bad options open no store. */
export function checkEngineOptions(options: EngineOptions): CheckedEngineOptions {
  const workflows = new WorkflowRegistry(options.workflows ?? []);
  if (options.maxPayloadBytes !== undefined) check(z.number().int().positive(), options.maxPayloadBytes, "createEngine: maxPayloadBytes");
  if (options.retention !== undefined) parsePolicy(options.retention);
  const schedules = ScheduleService.check(options.schedules ?? [], workflows.names());
  if (options.scheduler !== undefined) check(schedulerOptions, options.scheduler, "createEngine: scheduler");
  const queues = parseQueues(options.queues);
  const events = new EventRegistry(options.events ?? []);
  for (const workflow of workflows.byKey.values()) for (const event of workflow.events ?? []) events.add(event);
  for (const workflow of workflows.byKey.values()) {
    if (workflow.queue !== undefined && !queues.some((q) => q.name === workflow.queue)) {
      throw new ValidationError(
        `createEngine: workflow "${workflow.name}" joins queue "${workflow.queue}", which is not declared; add it to createEngine({ queues }).`,
      );
    }
  }
  if (options.maxRecoveryAttempts !== undefined) check(z.number().int().min(0).max(1000), options.maxRecoveryAttempts, "createEngine: maxRecoveryAttempts");
  return { workflows, schedules, queues, events };
}
