import { SCHEDULE_COLUMNS } from "../common/schedule-rows.js";

// The statements of schedules for the SQLite store (see sqlite-schedules.ts); the ones shared with PostgreSQL
// are built by common/schedule-rows.ts with {@link sqliteMarker} and bound with {@link sqliteParams}.

export const GET_SCHEDULE = `SELECT ${SCHEDULE_COLUMNS} FROM schedules WHERE name = ?`;
export const LIST_SCHEDULES = `SELECT ${SCHEDULE_COLUMNS} FROM schedules ORDER BY name`;
export const DELETE_SCHEDULE = "DELETE FROM schedules WHERE name = ?";

/** SQLite's placeholder for the n-th parameter: named `@pN` (better-sqlite3 binds `?NNN` poorly). */
export const sqliteMarker = (n: number): string => `@p${n}`;
/** A boolean as SQLite stores it. */
export const sqliteFlag = (b: boolean): number => (b ? 1 : 0);
/** Positional parameters as the named `@p1, @p2, …` that {@link sqliteMarker} writes. */
export function sqliteParams(params: readonly unknown[]): Record<string, unknown> {
  return Object.fromEntries(params.map((value, i) => [`p${i + 1}`, value]));
}
