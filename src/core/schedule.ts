/**
 * Schedules as the store keeps them: a definition (what to start, when) and the scheduler's state
 * (how far it got), plus a lease so that one scheduler at a time fires a schedule's ticks.
 * No I/O here; cron arithmetic lives in the engine.
 */

/** What happens to a tick when the schedule's previous run has not finished. */
export type OverlapPolicy = "skip" | "buffer" | "allow";

/** Which ticks missed while no scheduler ran (older than the grace period) are still fired. */
export type CatchUpPolicy = "none" | "latest" | "all";

/** A schedule's definition, as stored (input encoded). */
export interface ScheduleDefinitionRecord {
  name: string;
  /** Workflow name; a tick starts the newest version registered with the firing engine. */
  workflow: string;
  cron: string;
  /** IANA time zone the cron expression is read in. */
  timezone: string;
  /** Encoded workflow input, the same for every tick. */
  input: string;
  overlap: OverlapPolicy;
  catchUp: CatchUpPolicy;
  maxCatchUp: number;
  /** A tick at most this late (ms) is on time; older ticks are missed and follow `catchUp`. */
  graceMs: number;
}

/** The scheduler's progress on one schedule. */
export interface ScheduleState {
  /** Every tick at or before this time (epoch ms) was handled: fired, skipped, buffered or dropped. */
  cursorAt: number;
  /** The next tick after the cursor, as last computed (informational). */
  nextTickAt: number | null;
  /** The last tick that started a run. */
  lastTickAt: number | null;
  /** The run the last fired tick started. */
  lastRunId: string | null;
  /** `overlap: "buffer"`: the one tick waiting for the previous run to finish. */
  bufferedTickAt: number | null;
  /** Ticks that started a run. */
  firedCount: number;
  /** Ticks not started because the previous run was still going (`skip`, or `buffer` with a tick already buffered). */
  skippedCount: number;
  /** Missed ticks dropped by the catch-up policy (counted up to 100 000 per pass). */
  missedCount: number;
}

/** A schedule as stored: definition, state, pause flag and scheduler lease. */
export interface ScheduleRecord extends ScheduleDefinitionRecord, ScheduleState {
  paused: boolean;
  /** The scheduler holding the lease, or null. */
  owner: string | null;
  leaseExpiresAt: number | null;
  /** Fencing epoch: bumped when the lease changes hands or an operator pauses, resumes or redefines. */
  epoch: number;
  createdAt: number;
  updatedAt: number;
}

/** The run id a schedule's tick starts: derived from the name and the tick, so starting it twice starts it once. */
export function scheduleRunId(schedule: string, tickAt: number): string {
  return `schedule:${schedule}:${new Date(tickAt).toISOString()}`;
}

/**
 * The schedule and tick time of a run a schedule started, read from its run id; undefined for other runs.
 * @example
 * const tick = parseScheduleRunId(ctx.runId); // { schedule: "nightly", scheduledAt: Date }
 */
export function parseScheduleRunId(runId: string): { schedule: string; scheduledAt: Date } | undefined {
  const match = /^schedule:(.+):(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z)$/.exec(runId);
  if (!match) return undefined;
  return { schedule: match[1]!, scheduledAt: new Date(match[2]!) };
}
