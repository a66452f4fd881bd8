import type { ScheduleDefinitionRecord, ScheduleRecord, ScheduleState } from "../schedule.js";

/** Schedules (docs/operations/schedules.md): definitions, their state, and the scheduler's lease on each. Part of the {@link Store} port. */
export interface ScheduleStore {
  /**
   * Creates a schedule (state: cursor at `now`, counts 0, not paused, no lease), or, when one with this
   * name exists with a different definition, replaces its definition, keeps its state and pause flag,
   * clears its lease and bumps its epoch. Returns the stored row.
   */
  saveSchedule(definition: ScheduleDefinitionRecord, now: number): Promise<ScheduleRecord>;
  getSchedule(name: string): Promise<ScheduleRecord | undefined>;
  /** Every schedule, by name. */
  listSchedules(): Promise<ScheduleRecord[]>;
  /** Removes a schedule; false when there was none. Runs it started are kept. */
  deleteSchedule(name: string): Promise<boolean>;
  /**
   * Takes or renews the scheduler lease of a schedule that is not paused: succeeds when nobody holds it,
   * `owner` holds it, or the lease expired at `now`; the epoch is bumped when the owner changes.
   * Returns the claimed row, or undefined (held by another, paused, or unknown).
   */
  claimSchedule(name: string, owner: string, now: number, leaseMs: number): Promise<ScheduleRecord | undefined>;
  /** Writes the scheduler's state, only if `owner` still holds the lease at `epoch`. False when fenced out. */
  updateScheduleState(name: string, owner: string, epoch: number, state: ScheduleState, now: number): Promise<boolean>;
  /**
   * Pauses or resumes a schedule: clears its lease and bumps its epoch (fencing out a scheduler mid-pass).
   * Resuming moves the cursor to `now` when it is behind, so ticks that fell due while paused are not fired.
   * Returns the updated row, or undefined for an unknown schedule.
   */
  setSchedulePaused(name: string, paused: boolean, now: number): Promise<ScheduleRecord | undefined>;
}
