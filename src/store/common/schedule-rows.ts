import type { CatchUpPolicy, OverlapPolicy, ScheduleDefinitionRecord, ScheduleRecord, ScheduleState } from "../../core/schedule.js";

/**
 * Rows and statements of the `schedules` table (migration 0009), shared by the SQLite and PostgreSQL
 * stores. Statements take `p(n)`, the n-th (1-based) parameter marker, and `flag(b)`, how the dialect
 * binds a boolean, so only those differ between the two.
 */

export const SCHEDULE_COLUMNS =
  "name, workflow, cron, timezone, input, overlap, catch_up, max_catch_up, grace_ms, paused, cursor_at, next_tick_at, last_tick_at, " +
  "last_run_id, buffered_tick_at, fired_count, skipped_count, missed_count, owner, lease_expires_at, epoch, created_at, updated_at";

export interface ScheduleRow {
  name: string;
  workflow: string;
  cron: string;
  timezone: string;
  input: string;
  overlap: string;
  catch_up: string;
  max_catch_up: number | string;
  grace_ms: number | string;
  paused: number | boolean;
  cursor_at: number | string;
  next_tick_at: number | string | null;
  last_tick_at: number | string | null;
  last_run_id: string | null;
  buffered_tick_at: number | string | null;
  fired_count: number | string;
  skipped_count: number | string;
  missed_count: number | string;
  owner: string | null;
  lease_expires_at: number | string | null;
  epoch: number | string;
  created_at: number | string;
  updated_at: number | string;
}

const num = (value: number | string): number => Number(value);
const maybe = (value: number | string | null): number | null => (value === null ? null : Number(value));

export function toSchedule(row: ScheduleRow): ScheduleRecord {
  return {
    name: row.name,
    workflow: row.workflow,
    cron: row.cron,
    timezone: row.timezone,
    input: row.input,
    overlap: row.overlap as OverlapPolicy,
    catchUp: row.catch_up as CatchUpPolicy,
    maxCatchUp: num(row.max_catch_up),
    graceMs: num(row.grace_ms),
    paused: row.paused === true || row.paused === 1,
    cursorAt: num(row.cursor_at),
    nextTickAt: maybe(row.next_tick_at),
    lastTickAt: maybe(row.last_tick_at),
    lastRunId: row.last_run_id,
    bufferedTickAt: maybe(row.buffered_tick_at),
    firedCount: num(row.fired_count),
    skippedCount: num(row.skipped_count),
    missedCount: num(row.missed_count),
    owner: row.owner,
    leaseExpiresAt: maybe(row.lease_expires_at),
    epoch: num(row.epoch),
    createdAt: num(row.created_at),
    updatedAt: num(row.updated_at),
  };
}

/** True when `stored` already has exactly this definition (saving it again changes nothing). */
export function sameDefinition(stored: ScheduleDefinitionRecord, definition: ScheduleDefinitionRecord): boolean {
  return (
    stored.workflow === definition.workflow &&
    stored.cron === definition.cron &&
    stored.timezone === definition.timezone &&
    stored.input === definition.input &&
    stored.overlap === definition.overlap &&
    stored.catchUp === definition.catchUp &&
    stored.maxCatchUp === definition.maxCatchUp &&
    stored.graceMs === definition.graceMs
  );
}

type Marker = (n: number) => string;

/** A statement and its parameters. */
export interface ScheduleStatement {
  sql: string;
  params: unknown[];
}

/** Inserts a new schedule; a concurrent insert of the same name wins and this one does nothing. */
export function insertSchedule(p: Marker, d: ScheduleDefinitionRecord, now: number): ScheduleStatement {
  const values = [d.name, d.workflow, d.cron, d.timezone, d.input, d.overlap, d.catchUp, d.maxCatchUp, d.graceMs, now, now, now];
  return {
    sql:
      "INSERT INTO schedules (name, workflow, cron, timezone, input, overlap, catch_up, max_catch_up, grace_ms, cursor_at, created_at, updated_at) " +
      `VALUES (${values.map((_, i) => p(i + 1)).join(", ")}) ON CONFLICT (name) DO NOTHING`,
    params: values,
  };
}

/** Replaces a schedule's definition, keeps its state; clears the lease and bumps the epoch. */
export function redefineSchedule(p: Marker, d: ScheduleDefinitionRecord, now: number): ScheduleStatement {
  return {
    sql:
      `UPDATE schedules SET workflow = ${p(1)}, cron = ${p(2)}, timezone = ${p(3)}, input = ${p(4)}, overlap = ${p(5)}, catch_up = ${p(6)}, ` +
      `max_catch_up = ${p(7)}, grace_ms = ${p(8)}, next_tick_at = NULL, owner = NULL, lease_expires_at = NULL, epoch = epoch + 1, ` +
      `updated_at = ${p(9)} WHERE name = ${p(10)}`,
    params: [d.workflow, d.cron, d.timezone, d.input, d.overlap, d.catchUp, d.maxCatchUp, d.graceMs, now, d.name],
  };
}

/** See Store.claimSchedule; returns the row (RETURNING). */
export function claimScheduleSql(p: Marker, flag: (b: boolean) => unknown, name: string, owner: string, now: number, leaseMs: number): ScheduleStatement {
  return {
    sql:
      `UPDATE schedules SET epoch = CASE WHEN owner = ${p(1)} THEN epoch ELSE epoch + 1 END, owner = ${p(1)}, lease_expires_at = ${p(2)}, ` +
      `updated_at = ${p(3)} WHERE name = ${p(4)} AND paused = ${p(5)} AND (owner IS NULL OR owner = ${p(1)} OR lease_expires_at <= ${p(3)}) ` +
      `RETURNING ${SCHEDULE_COLUMNS}`,
    params: [owner, now + leaseMs, now, name, flag(false)],
  };
}

/** See Store.updateScheduleState. */
export function updateStateSql(p: Marker, name: string, owner: string, epoch: number, s: ScheduleState, now: number): ScheduleStatement {
  return {
    sql:
      `UPDATE schedules SET cursor_at = ${p(1)}, next_tick_at = ${p(2)}, last_tick_at = ${p(3)}, last_run_id = ${p(4)}, buffered_tick_at = ${p(5)}, ` +
      `fired_count = ${p(6)}, skipped_count = ${p(7)}, missed_count = ${p(8)}, updated_at = ${p(9)} ` +
      `WHERE name = ${p(10)} AND owner = ${p(11)} AND epoch = ${p(12)}`,
    params: [s.cursorAt, s.nextTickAt, s.lastTickAt, s.lastRunId, s.bufferedTickAt, s.firedCount, s.skippedCount, s.missedCount, now, name, owner, epoch],
  };
}

/** See Store.setSchedulePaused; returns the row (RETURNING). */
export function setPausedSql(p: Marker, flag: (b: boolean) => unknown, name: string, paused: boolean, now: number): ScheduleStatement {
  const cursor = paused ? "cursor_at" : `CASE WHEN cursor_at < ${p(2)} THEN ${p(2)} ELSE cursor_at END`;
  return {
    sql:
      `UPDATE schedules SET paused = ${p(1)}, cursor_at = ${cursor}, next_tick_at = NULL, owner = NULL, lease_expires_at = NULL, ` +
      `epoch = epoch + 1, updated_at = ${p(2)} WHERE name = ${p(3)} RETURNING ${SCHEDULE_COLUMNS}`,
    params: [flag(paused), now, name],
  };
}
