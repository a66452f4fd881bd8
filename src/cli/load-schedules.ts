import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { isSchedule, type Schedule } from "../engine/schedule.js";
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
