import type { ScheduleDefinitionRecord, ScheduleRecord, ScheduleState } from "../../core/schedule.js";
import type { ScheduleStore } from "../../core/store.js";
import * as schedules from "../common/schedule-rows.js";
import type { SqliteConnection } from "./sqlite-connection.js";
import { DELETE_SCHEDULE, GET_SCHEDULE, LIST_SCHEDULES, sqliteFlag, sqliteMarker, sqliteParams } from "./sqlite-schedules-queries.js";

/** The {@link ScheduleStore} part of {@link SqliteStore}: schedule definitions and their owners' state. */
export class SqliteSchedules implements ScheduleStore {
  constructor(private readonly c: SqliteConnection) {}

  /** See {@link Store.saveSchedule}. */
  async saveSchedule(definition: ScheduleDefinitionRecord, now: number): Promise<ScheduleRecord> {
    return this.c.immediate(() => {
      const stored = this.loadSchedule(definition.name);
      const statement = !stored
        ? schedules.insertSchedule(sqliteMarker, definition, now)
        : schedules.sameDefinition(stored, definition)
          ? undefined
          : schedules.redefineSchedule(sqliteMarker, definition, now);
      if (statement) this.c.q.prepared(statement.sql).run(sqliteParams(statement.params));
      return this.loadSchedule(definition.name)!;
    });
  }

  /** See {@link Store.getSchedule}. */
  async getSchedule(name: string): Promise<ScheduleRecord | undefined> {
    return this.loadSchedule(name);
  }

  /** See {@link Store.listSchedules}. */
  async listSchedules(): Promise<ScheduleRecord[]> {
    return (this.c.q.prepared(LIST_SCHEDULES).all() as schedules.ScheduleRow[]).map(schedules.toSchedule);
  }

  /** See {@link Store.deleteSchedule}. */
  async deleteSchedule(name: string): Promise<boolean> {
    return this.c.q.prepared(DELETE_SCHEDULE).run(name).changes === 1;
  }

  /** See {@link Store.claimSchedule}. */
  async claimSchedule(name: string, owner: string, now: number, leaseMs: number): Promise<ScheduleRecord | undefined> {
    const statement = schedules.claimScheduleSql(sqliteMarker, sqliteFlag, name, owner, now, leaseMs);
    const row = this.c.q.prepared(statement.sql).get(sqliteParams(statement.params)) as schedules.ScheduleRow | undefined;
    return row && schedules.toSchedule(row);
  }

  /** See {@link Store.updateScheduleState}. */
  async updateScheduleState(name: string, owner: string, epoch: number, state: ScheduleState, now: number): Promise<boolean> {
    const statement = schedules.updateStateSql(sqliteMarker, name, owner, epoch, state, now);
    return this.c.q.prepared(statement.sql).run(sqliteParams(statement.params)).changes === 1;
  }

  /** See {@link Store.setSchedulePaused}. */
  async setSchedulePaused(name: string, paused: boolean, now: number): Promise<ScheduleRecord | undefined> {
    const statement = schedules.setPausedSql(sqliteMarker, sqliteFlag, name, paused, now);
    const row = this.c.q.prepared(statement.sql).get(sqliteParams(statement.params)) as schedules.ScheduleRow | undefined;
    return row && schedules.toSchedule(row);
  }

  private loadSchedule(name: string): ScheduleRecord | undefined {
    const row = this.c.q.prepared(GET_SCHEDULE).get(name) as schedules.ScheduleRow | undefined;
    return row && schedules.toSchedule(row);
  }
}
