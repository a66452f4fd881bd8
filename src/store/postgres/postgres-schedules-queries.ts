import { SCHEDULE_COLUMNS } from "../common/schedule-rows.js";

// The statements of schedules for the PostgreSQL store (see postgres-schedules.ts); the ones shared with SQLite
// are built by common/schedule-rows.ts with {@link pgMarker}. Plain texts: they run rarely.

export const GET_SCHEDULE = `SELECT ${SCHEDULE_COLUMNS} FROM schedules WHERE name = $1`;
export const LIST_SCHEDULES = `SELECT ${SCHEDULE_COLUMNS} FROM schedules ORDER BY name`;
export const DELETE_SCHEDULE = "DELETE FROM schedules WHERE name = $1 RETURNING name";

/** PostgreSQL's placeholder for the n-th parameter. */
export const pgMarker = (n: number): string => `$${n}`;
