import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { QueueOptions } from "../core/flow-control.js";
import type { OutboxOptions } from "../engine/outbox.js";
import { isSchedule, type Schedule } from "../engine/schedule.js";
import type { Command } from "commander";
import { intArg } from "./args.js";
import { UsageError } from "./errors.js";

/**
 * The schedules that workflow modules export: their `schedules` array and any export that is a schedule
 * (made with defineSchedule). Modules are the ones `--workflows` named, already imported (ES modules are
 * imported once, so this sees the same objects).
 * @throws UsageError when two different schedules share a name.
 */
export async function loadModuleSchedules(specs: readonly string[] | undefined): Promise<Schedule<unknown>[]> {
  const byName = new Map<string, { schedule: Schedule<unknown>; from: string }>();
  for (const spec of specs ?? []) {
    const namespace = (await import(pathToFileURL(resolve(spec)).href)) as Record<string, unknown>;
    const found: unknown[] = [];
    for (const [key, value] of Object.entries(namespace)) {
      if (key === "schedules" && Array.isArray(value)) found.push(...(value as unknown[]));
      else found.push(value);
    }
    for (const schedule of new Set(found.filter(isSchedule))) {
      const existing = byName.get(schedule.name);
      if (existing && existing.schedule !== schedule) {
        throw new UsageError(`Schedule "${schedule.name}" is defined twice (in ${existing.from} and ${spec}). Give one of them another name.`);
      }
      byName.set(schedule.name, { schedule, from: spec });
    }
  }
  return [...byName.values()].map((entry) => entry.schedule);
}

/** What workflow modules may export besides workflows, for the engine the CLI creates. */
export interface ModuleEngineOptions {
  schedules: Schedule<unknown>[];
  /** Merged `queues` exports (flow control): createEngine({ queues }). */
  queues?: Record<string, QueueOptions>;
  /** Merged `outbox` exports (handlers and webhooks by topic): createEngine({ outbox }). */
  outbox?: OutboxOptions;
  /** A `maxRecoveryAttempts` export (dead-letter limit, 0: never): createEngine({ maxRecoveryAttempts }). */
  maxRecoveryAttempts?: number;
}

/** Adds `--max-recovery-attempts <n>` (createEngine({ maxRecoveryAttempts })) to a command that runs a worker. */
export function maxRecoveryOption(command: Command): Command {
  return command.option(
    "--max-recovery-attempts <n>",
    "dead-letter a run after n recoveries in a row without progress (default 10, or the modules' maxRecoveryAttempts export; 0: never)",
    intArg(0, 1000),
  );
}

/**
 * The engine options workflow modules export: schedules (see {@link loadModuleSchedules}), a `queues`
 * record (the flow-control queues their workflows join), an `outbox` object (handlers and webhooks
 * of the messages they emit) and a `maxRecoveryAttempts` number (the dead-letter limit), so `cairn worker`, `serve` and `dev` run them as the modules declare.
 * @throws UsageError when two modules declare one queue differently, or one topic's handler twice.
 */
export async function loadModuleEngineOptions(specs: readonly string[] | undefined): Promise<ModuleEngineOptions> {
  const options: ModuleEngineOptions = { schedules: await loadModuleSchedules(specs) };
  for (const spec of specs ?? []) {
    const namespace = (await import(pathToFileURL(resolve(spec)).href)) as Record<string, unknown>;
    const queues = namespace["queues"];
    if (queues !== undefined) {
      if (typeof queues !== "object" || queues === null || Array.isArray(queues)) {
        throw new UsageError(`${spec} exports \`queues\` that is not an object of queue options ({ llm: { concurrency: 8 } }).`);
      }
      for (const [name, queue] of Object.entries(queues as Record<string, QueueOptions>)) {
        const existing = options.queues?.[name];
        if (existing !== undefined && JSON.stringify(existing) !== JSON.stringify(queue)) {
          throw new UsageError(`Queue "${name}" is declared with different limits by two workflow modules (the second is ${spec}); declare it once.`);
        }
        options.queues = { ...options.queues, [name]: queue };
      }
    }
    const outbox = namespace["outbox"];
    if (outbox !== undefined) {
      if (typeof outbox !== "object" || outbox === null || Array.isArray(outbox)) {
        throw new UsageError(`${spec} exports \`outbox\` that is not an object ({ handlers, webhooks, maxAttempts, backoff }).`);
      }
      const given = outbox as OutboxOptions;
      const merged: OutboxOptions = { ...given, ...options.outbox };
      for (const key of ["handlers", "webhooks"] as const) {
        const mine = given[key] ?? {};
        const before = options.outbox?.[key] ?? {};
        for (const topic of Object.keys(mine)) {
          if (topic in before)
            throw new UsageError(`Two workflow modules declare outbox ${key} for topic "${topic}" (the second is ${spec}); declare it once.`);
        }
        if (Object.keys(mine).length > 0 || Object.keys(before).length > 0) merged[key] = { ...before, ...mine } as never;
      }
      options.outbox = merged;
    }
    const max = namespace["maxRecoveryAttempts"];
    if (max !== undefined) {
      if (typeof max !== "number" || !Number.isInteger(max) || max < 0 || max > 1000) {
        throw new UsageError(`${spec} exports \`maxRecoveryAttempts\` that is not a whole number from 0 (never dead-letter) to 1000.`);
      }
      if (options.maxRecoveryAttempts !== undefined && options.maxRecoveryAttempts !== max) {
        throw new UsageError(`Two workflow modules export different maxRecoveryAttempts (the second is ${spec}); export it once.`);
      }
      options.maxRecoveryAttempts = max;
    }
  }
  return options;
}
