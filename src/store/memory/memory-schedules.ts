import type { ScheduleDefinitionRecord, ScheduleRecord, ScheduleState } from "../../core/schedule.js";
import type { ScheduleStore } from "../../core/store.js";
import { sameDefinition } from "../common/schedule-rows.js";

/** The {@link ScheduleStore} part of {@link MemoryStore}: the `schedules` table, the reference semantics of the Store's schedule methods. */
export class MemorySchedules implements ScheduleStore {
  private readonly rows = new Map<string, ScheduleRecord>();

  /** See {@link Store.saveSchedule}. */
  async saveSchedule(definition: ScheduleDefinitionRecord, now: number): Promise<ScheduleRecord> {
    const stored = this.rows.get(definition.name);
    if (!stored) {
      this.rows.set(definition.name, {
        ...definition,
        paused: false,
        cursorAt: now,
        nextTickAt: null,
        lastTickAt: null,
        lastRunId: null,
        bufferedTickAt: null,
        firedCount: 0,
        skippedCount: 0,
        missedCount: 0,
        owner: null,
        leaseExpiresAt: null,
        epoch: 0,
        createdAt: now,
        updatedAt: now,
      });
    } else if (!sameDefinition(stored, definition)) {
      this.rows.set(definition.name, {
        ...stored,
        ...definition,
        nextTickAt: null,
        owner: null,
        leaseExpiresAt: null,
        epoch: stored.epoch + 1,
        updatedAt: now,
      });
    }
    return this.read(definition.name)!;
  }

  /** See {@link Store.getSchedule}. */
  async getSchedule(name: string): Promise<ScheduleRecord | undefined> {
    return this.read(name);
  }

  /** See {@link Store.listSchedules}. */
  async listSchedules(): Promise<ScheduleRecord[]> {
    return [...this.rows.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)).map((name) => this.read(name)!);
  }

  /** See {@link Store.deleteSchedule}. */
  async deleteSchedule(name: string): Promise<boolean> {
    return this.rows.delete(name);
  }

  /** See {@link Store.claimSchedule}. */
  async claimSchedule(name: string, owner: string, now: number, leaseMs: number): Promise<ScheduleRecord | undefined> {
    const row = this.rows.get(name);
    if (!row || row.paused) return undefined;
    const free = row.owner === null || row.owner === owner || (row.leaseExpiresAt !== null && row.leaseExpiresAt <= now);
    if (!free) return undefined;
    this.rows.set(name, { ...row, epoch: row.owner === owner ? row.epoch : row.epoch + 1, owner, leaseExpiresAt: now + leaseMs, updatedAt: now });
    return this.read(name);
  }

  /** See {@link Store.updateScheduleState}. */
  async updateScheduleState(name: string, owner: string, epoch: number, state: ScheduleState, now: number): Promise<boolean> {
    const row = this.rows.get(name);
    if (!row || row.owner !== owner || row.epoch !== epoch) return false;
    this.rows.set(name, { ...row, ...pickState(state), updatedAt: now });
    return true;
  }

  /** See {@link Store.setSchedulePaused}. */
  async setSchedulePaused(name: string, paused: boolean, now: number): Promise<ScheduleRecord | undefined> {
    const row = this.rows.get(name);
    if (!row) return undefined;
    const cursorAt = paused ? row.cursorAt : Math.max(row.cursorAt, now);
    this.rows.set(name, { ...row, paused, cursorAt, nextTickAt: null, owner: null, leaseExpiresAt: null, epoch: row.epoch + 1, updatedAt: now });
    return this.read(name);
  }

  private read(name: string): ScheduleRecord | undefined {
    const row = this.rows.get(name);
    return row && { ...row };
  }
}

function pickState(s: ScheduleState): ScheduleState {
  return {
    cursorAt: s.cursorAt,
    nextTickAt: s.nextTickAt,
    lastTickAt: s.lastTickAt,
    lastRunId: s.lastRunId,
    bufferedTickAt: s.bufferedTickAt,
    firedCount: s.firedCount,
    skippedCount: s.skippedCount,
    missedCount: s.missedCount,
  };
}
