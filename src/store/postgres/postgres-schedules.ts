import type { ScheduleDefinitionRecord, ScheduleRecord, ScheduleState } from "../../core/schedule.js";
import type { ScheduleStore } from "../../core/store.js";
import * as schedules from "../common/schedule-rows.js";
import type { PostgresConnection } from "./postgres-connection.js";
import { DELETE_SCHEDULE, GET_SCHEDULE, LIST_SCHEDULES, pgMarker } from "./postgres-schedules-queries.js";

/** The {@link ScheduleStore} part of {@link PostgresStore}: schedule definitions and their owners' state. */
export class PostgresSchedules implements ScheduleStore {
  constructor(private readonly db: PostgresConnection) {}

  /** See {@link Store.saveSchedule}. */
  async saveSchedule(definition: ScheduleDefinitionRecord, now: number): Promise<ScheduleRecord> {
    const stored = await this.getSchedule(definition.name);
    const statement = !stored
      ? schedules.insertSchedule(pgMarker, definition, now)
      : schedules.sameDefinition(stored, definition)
        ? undefined
        : schedules.redefineSchedule(pgMarker, definition, now);
    if (statement) await this.db.query(statement.sql, statement.params);
    const saved = await this.getSchedule(definition.name);
    if (!saved) throw new Error(`Schedule "${definition.name}" was deleted while it was being saved.`);
    return saved;
  }

  /** See {@link Store.getSchedule}. */
  async getSchedule(name: string): Promise<ScheduleRecord | undefined> {
    const [row] = await this.db.query<schedules.ScheduleRow>(GET_SCHEDULE, [name]);
    return row && schedules.toSchedule(row);
  }

  /** See {@link Store.listSchedules}. */
  async listSchedules(): Promise<ScheduleRecord[]> {
    return (await this.db.query<schedules.ScheduleRow>(LIST_SCHEDULES)).map(schedules.toSchedule);
  }

  /** See {@link Store.deleteSchedule}. */
  async deleteSchedule(name: string): Promise<boolean> {
    return (await this.db.query(DELETE_SCHEDULE, [name])).length === 1;
  }

  /** See {@link Store.claimSchedule}. Times are the caller's (the engine's clock follows the database's). */
  async claimSchedule(name: string, owner: string, now: number, leaseMs: number): Promise<ScheduleRecord | undefined> {
    const statement = schedules.claimScheduleSql(pgMarker, Boolean, name, owner, now, leaseMs);
    const [row] = await this.db.query<schedules.ScheduleRow>(statement.sql, statement.params);
    return row && schedules.toSchedule(row);
  }

  /** See {@link Store.updateScheduleState}. */
  async updateScheduleState(name: string, owner: string, epoch: number, state: ScheduleState, now: number): Promise<boolean> {
    const statement = schedules.updateStateSql(pgMarker, name, owner, epoch, state, now);
    return (await this.db.query(`${statement.sql} RETURNING name`, statement.params)).length === 1;
  }

  /** See {@link Store.setSchedulePaused}. */
  async setSchedulePaused(name: string, paused: boolean, now: number): Promise<ScheduleRecord | undefined> {
    const statement = schedules.setPausedSql(pgMarker, Boolean, name, paused, now);
    const [row] = await this.db.query<schedules.ScheduleRow>(statement.sql, statement.params);
    return row && schedules.toSchedule(row);
  }
}
