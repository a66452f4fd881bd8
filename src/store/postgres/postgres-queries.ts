/**
 * A statement with a fixed text. The name makes `pg` prepare it once per connection;
 * names are per text, so a changed text must get a new name.
 */
export interface Sql {
  name: string;
  text: string;
}

/** The database clock in epoch milliseconds: the time the expression is evaluated, not the transaction start. */
export const DB_NOW = "(extract(epoch from clock_timestamp()) * 1000)::bigint";

/**
 * The database clock as a single statement sees it: when the statement started. Stable within the
 * statement (unlike clock_timestamp()), so comparisons with it can use indexes.
 */
export const STATEMENT_NOW = "(extract(epoch from statement_timestamp()) * 1000)::bigint";

/** `$n` as the caller's time, or the database clock when it is NULL (database-clock mode passes NULL). */
export function nowParam(n: number): string {
  return `COALESCE($${n}::bigint, ${STATEMENT_NOW})`;
}

/** A named statement: `cairn_` + `name`. */
export const sql = (name: string, text: string): Sql => ({ name: `cairn_${name}`, text });
