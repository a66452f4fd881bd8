import { InvalidScheduleError, ScheduleNotFoundError, ValidationError, WorkflowNotRegisteredError } from "../core/errors.js";
import type { ScheduleRecord } from "../core/schedule.js";
import { describeIssues } from "../core/schemas.js";
import { decode } from "../core/serialize.js";
import type { ScheduleStore, Store } from "../core/store.js";
import { nextTick, parseCron } from "./cron.js";
import type { EngineLogger } from "./engine.js";
import { defineSchedule, isSchedule, scheduleNameSchema, toDefinitionRecord, type Schedule, type ScheduleInfo, type ScheduleOptions } from "./schedule.js";
import { Scheduler, type SchedulerTiming } from "./scheduler.js";

/** What the engine's schedule methods need. */
export interface ScheduleServiceDeps {
  store: ScheduleStore & Pick<Store, "getRun">;
  clock: () => number;
  logger: EngineLogger;
  /** Registered workflow names. */
  workflowNames(): string[];
  start(workflow: string, input: unknown, runId: string): Promise<void>;
}

/** The engine's schedules: saving definitions, pause/resume, listing, and the scheduler that runs while the engine has workers. */
export class ScheduleService {
  private readonly scheduler: Scheduler | null;

  constructor(
    private readonly deps: ScheduleServiceDeps,
    timing: SchedulerTiming & { enabled: boolean },
  ) {
    this.scheduler = timing.enabled
      ? new Scheduler(
          {
            store: deps.store,
            clock: deps.clock,
            logger: deps.logger,
            hasWorkflow: (name) => deps.workflowNames().includes(name),
            start: (workflow, input, runId) => deps.start(workflow, decode(input), runId),
          },
          timing,
        )
      : null;
  }

  /** Checks definitions given to createEngine before anything is saved. */
  static check(schedules: unknown[], workflowNames: string[]): Schedule<unknown>[] {
    const names = new Set<string>();
    return schedules.map((schedule, i) => {
      if (!isSchedule(schedule)) throw new ValidationError(`createEngine: schedules[${i}] is not a schedule; make it with defineSchedule().`);
      if (names.has(schedule.name)) throw new InvalidScheduleError(schedule.name, "the name is given twice in createEngine({ schedules })");
      names.add(schedule.name);
      if (!workflowNames.includes(schedule.workflow)) throw new WorkflowNotRegisteredError(schedule.workflow, workflowNames);
      return schedule;
    });
  }

  /** Creates or redefines a schedule in the store (its state is kept). */
  async save(schedule: Schedule<unknown> | ScheduleOptions<unknown>): Promise<ScheduleInfo> {
    const definition = isSchedule(schedule) ? schedule : defineSchedule(schedule);
    const names = this.deps.workflowNames();
    if (!names.includes(definition.workflow)) throw new WorkflowNotRegisteredError(definition.workflow, names);
    const row = await this.deps.store.saveSchedule(toDefinitionRecord(definition), this.deps.clock());
    this.scheduler?.kick();
    return this.info(row);
  }

  async setPaused(name: string, paused: boolean): Promise<ScheduleInfo> {
    const row = await this.deps.store.setSchedulePaused(checkName(name), paused, this.deps.clock());
    if (!row) throw new ScheduleNotFoundError(name);
    this.scheduler?.kick();
    return this.info(row);
  }

  async delete(name: string): Promise<void> {
    if (!(await this.deps.store.deleteSchedule(checkName(name)))) throw new ScheduleNotFoundError(name);
  }

  async get(name: string): Promise<ScheduleInfo> {
    const row = await this.deps.store.getSchedule(checkName(name));
    if (!row) throw new ScheduleNotFoundError(name);
    return this.info(row);
  }

  async list(): Promise<ScheduleInfo[]> {
    return Promise.all((await this.deps.store.listSchedules()).map((row) => this.info(row)));
  }

  /** Runs the scheduler (while the engine has a worker). */
  startScheduler(): void {
    this.scheduler?.start();
  }

  async stopScheduler(): Promise<void> {
    await this.scheduler?.stop();
  }

  private async info(row: ScheduleRecord): Promise<ScheduleInfo> {
    let next: number | null = null;
    if (!row.paused) {
      try {
        next = nextTick(parseCron(row.cron, row.timezone), row.cursorAt);
      } catch {
        next = null;
      }
    }
    const lastRun = row.lastRunId === null ? undefined : await this.deps.store.getRun(row.lastRunId);
    const date = (ms: number | null) => (ms === null ? null : new Date(ms));
    return {
      name: row.name,
      workflow: row.workflow,
      cron: row.cron,
      timezone: row.timezone,
      input: decode(row.input),
      overlap: row.overlap,
      catchUp: row.catchUp,
      maxCatchUp: row.maxCatchUp,
      graceMs: row.graceMs,
      status: row.paused ? "paused" : "active",
      nextTickAt: date(next),
      lastTickAt: date(row.lastTickAt),
      lastRunId: row.lastRunId,
      lastRunStatus: lastRun?.status ?? null,
      bufferedTickAt: date(row.bufferedTickAt),
      firedCount: row.firedCount,
      skippedCount: row.skippedCount,
      missedCount: row.missedCount,
      owner: row.owner,
    };
  }
}

function checkName(name: unknown): string {
  const parsed = scheduleNameSchema.safeParse(name);
  if (!parsed.success) throw new ValidationError(`schedule name: ${describeIssues(parsed.error)}`);
  return parsed.data;
}
