import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import type { Cron } from "croner";
import { isCairnError } from "../core/errors.js";
import { isTerminal } from "../core/run.js";
import { scheduleRunId, type ScheduleRecord, type ScheduleState } from "../core/schedule.js";
import { serializeError } from "../core/serialize.js";
import type { ScheduleStore, Store } from "../core/store.js";
import { crashPoint } from "./crash-points.js";
import { dueTicks, nextTick, parseCron } from "./cron.js";
import type { EngineLogger } from "./engine.js";

/** What the scheduler needs from its engine. */
export interface SchedulerDeps {
  store: ScheduleStore & Pick<Store, "getRun">;
  clock: () => number;
  logger: EngineLogger;
  /** True when this engine can start the workflow (only then does it fire the schedule). */
  hasWorkflow(name: string): boolean;
  /** Starts a tick's run: `engine.start(workflow, input, { runId })`, idempotent by runId. */
  start(workflow: string, input: string, runId: string): Promise<void>;
}

/** Scheduler timing. */
export interface SchedulerTiming {
  /** Longest wait between passes (a schedule changed elsewhere is seen within it). */
  pollMs: number;
  /** How long a scheduler holds a schedule it fired; another takes over once it expires. */
  leaseMs: number;
}

/** With no schedule in the store, passes are this many times `pollMs` apart. */
const IDLE_FACTOR = 5;

/** Thrown inside a pass when another scheduler or an operator fenced this one out. */
class Fenced extends Error {}

/**
 * Fires due schedule ticks. Every engine with a worker runs one; a schedule's ticks are fired by the one
 * scheduler holding its lease (fenced by epoch), and each tick starts the run `schedule:<name>:<ISO tick>`
 * before the state moves past it, so a scheduler killed in between leaves a tick that the next one finds
 * already started: never lost, never doubled.
 */
export class Scheduler {
  readonly owner = `${hostname()}:${process.pid}:sched:${randomBytes(3).toString("hex")}`;
  private readonly crons = new Map<string, Cron>();
  private stopping = false;
  private timer: NodeJS.Timeout | null = null;
  private wake: (() => void) | null = null;
  private loopDone: Promise<void> | null = null;
  private kicked = false;

  constructor(
    private readonly deps: SchedulerDeps,
    private readonly timing: SchedulerTiming,
  ) {}

  /** Starts the loop (idempotent). */
  start(): void {
    if (this.loopDone) return;
    this.stopping = false;
    this.loopDone = this.loop();
  }

  /** Stops the loop after the pass in progress. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.kick();
    await this.loopDone;
    this.loopDone = null;
  }

  /** Runs a pass now instead of at the next planned time. */
  kick(): void {
    this.kicked = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.wake?.();
  }

  private async loop(): Promise<void> {
    while (!this.stopping) {
      let waitMs = this.timing.pollMs;
      this.kicked = false;
      try {
        waitMs = await this.pass();
      } catch (error) {
        this.deps.logger.log("warn", "a scheduler pass failed; retrying", { error: serializeError(error) });
      }
      if (this.stopping) break;
      if (this.kicked) continue; // kicked during the pass: look again at once
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        this.timer = setTimeout(resolve, Math.max(1, waitMs));
      });
      this.wake = null;
    }
  }

  /** One pass over every schedule; returns how long to wait for the next one. */
  async pass(): Promise<number> {
    const rows = await this.deps.store.listSchedules();
    // An engine with no schedules looks less often; engine.schedule() kicks the scheduler at once anyway.
    if (rows.length === 0) return this.timing.pollMs * IDLE_FACTOR;
    let waitMs = this.timing.pollMs;
    for (const row of rows) {
      if (this.stopping) break;
      if (row.paused || !this.deps.hasWorkflow(row.workflow)) continue;
      const cron = this.cron(row);
      if (!cron) continue;
      let cursor = row.cursorAt;
      const next = nextTick(cron, cursor);
      if (row.bufferedTickAt !== null || (next !== null && next <= this.deps.clock())) {
        // Held by another scheduler, or failed: look again after pollMs, not at the (past) next tick.
        const claimed = await this.deps.store.claimSchedule(row.name, this.owner, this.deps.clock(), this.timing.leaseMs);
        if (!claimed) continue;
        try {
          cursor = await this.fire(claimed, cron);
        } catch (error) {
          // Fenced out, or the engine closing under a pass: nothing to report.
          if (!(error instanceof Fenced) && !isCairnError(error, "ENGINE_CLOSED"))
            this.deps.logger.log("warn", "firing a schedule failed; the next pass retries", { schedule: row.name, error: serializeError(error) });
          continue;
        }
      }
      const upcoming = nextTick(cron, cursor);
      if (upcoming !== null) waitMs = Math.min(waitMs, upcoming - this.deps.clock() + 1);
    }
    return waitMs;
  }

  private cron(row: ScheduleRecord): Cron | undefined {
    const key = `${row.cron}\u0000${row.timezone}`;
    let cron = this.crons.get(key);
    if (!cron) {
      try {
        cron = parseCron(row.cron, row.timezone);
      } catch (error) {
        this.deps.logger.log("error", "a stored schedule has an invalid cron expression; it is not fired", {
          schedule: row.name,
          error: serializeError(error),
        });
        return undefined;
      }
      this.crons.set(key, cron);
    }
    return cron;
  }

  /** Fires what is due for a schedule this scheduler holds; returns the new cursor. */
  private async fire(row: ScheduleRecord, cron: Cron): Promise<number> {
    const { store, logger } = this.deps;
    let state: ScheduleState = {
      cursorAt: row.cursorAt,
      nextTickAt: row.nextTickAt,
      lastTickAt: row.lastTickAt,
      lastRunId: row.lastRunId,
      bufferedTickAt: row.bufferedTickAt,
      firedCount: row.firedCount,
      skippedCount: row.skippedCount,
      missedCount: row.missedCount,
    };
    const save = async (next: ScheduleState): Promise<void> => {
      if (!(await store.updateScheduleState(row.name, this.owner, row.epoch, next, this.deps.clock()))) throw new Fenced();
      state = next;
    };
    if (state.bufferedTickAt !== null && (await this.previousDone(state.lastRunId))) {
      const tick = state.bufferedTickAt;
      const runId = await this.startTick(row, tick);
      await save({ ...state, bufferedTickAt: null, lastTickAt: tick, lastRunId: runId, firedCount: state.firedCount + 1 });
    }
    const due = dueTicks(cron, state.cursorAt, this.deps.clock(), row.graceMs, row.catchUp, row.maxCatchUp);
    if (due.dropped > 0) {
      logger.log("warn", "missed schedule ticks dropped by the catch-up policy", { schedule: row.name, dropped: due.dropped, catchUp: row.catchUp });
      state = { ...state, missedCount: state.missedCount + due.dropped };
    }
    for (const tick of due.fire) {
      const runId = scheduleRunId(row.name, tick);
      const after = { ...state, cursorAt: tick, nextTickAt: nextTick(cron, tick) };
      const started = (await store.getRun(runId)) !== undefined; // started before a crash: it counts as fired
      if (started || row.overlap === "allow" || (await this.previousDone(state.lastRunId))) {
        if (!started) await this.startTick(row, tick);
        await save({ ...after, lastTickAt: tick, lastRunId: runId, firedCount: state.firedCount + 1 });
      } else if (row.overlap === "buffer" && state.bufferedTickAt === null) {
        logger.log("info", "schedule tick buffered: the previous run is still going", { schedule: row.name, tick: new Date(tick).toISOString() });
        await save({ ...after, bufferedTickAt: tick });
      } else {
        logger.log("info", "schedule tick skipped: the previous run is still going", {
          schedule: row.name,
          tick: new Date(tick).toISOString(),
          overlap: row.overlap,
        });
        await save({ ...after, skippedCount: state.skippedCount + 1 });
      }
    }
    if (due.cursor !== state.cursorAt || state.missedCount !== row.missedCount || state.nextTickAt === null) {
      await save({ ...state, cursorAt: due.cursor, nextTickAt: nextTick(cron, due.cursor) });
    }
    return state.cursorAt;
  }

  private async startTick(row: ScheduleRecord, tick: number): Promise<string> {
    const runId = scheduleRunId(row.name, tick);
    try {
      await this.deps.start(row.workflow, row.input, runId);
    } catch (error) {
      // The tick's run exists with an older input (the schedule was redefined meanwhile): it was started.
      if (!isCairnError(error, "RUN_CONFLICT")) throw error;
    }
    crashPoint("schedule-after-start", runId);
    return runId;
  }

  private async previousDone(runId: string | null): Promise<boolean> {
    if (runId === null) return true;
    const run = await this.deps.store.getRun(runId);
    return !run || isTerminal(run.status);
  }
}
