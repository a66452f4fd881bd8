import { DB_NOW, sql } from "./postgres-queries.js";

// The statements of journal listeners for the PostgreSQL store (see postgres-journal-notices.ts).

/** The runs some listener's row in `journal_listeners` is current for (the writer side's reading). */
export const LISTENED_RUNS = sql("listened_journal_runs", `SELECT DISTINCT run_id AS "runId" FROM journal_listeners WHERE expires_at > ${DB_NOW}`);

/** Writes or renews one listener's rows for runs `$2`, current for `$3` milliseconds. */
export const ADVERTISE = sql(
  "advertise_journal_runs",
  `INSERT INTO journal_listeners (listener_id, run_id, expires_at)
   SELECT $1, run_id, ${DB_NOW} + $3::bigint FROM unnest($2::text[]) AS run_id
   ON CONFLICT (listener_id, run_id) DO UPDATE SET expires_at = EXCLUDED.expires_at`,
);

/** Removes one listener's rows for runs `$2`. */
export const RETIRE = sql("retire_journal_runs", "DELETE FROM journal_listeners WHERE listener_id = $1 AND run_id = ANY($2::text[])");

/** Removes all of one listener's rows. */
export const RETIRE_ALL = sql("retire_journal_listener", "DELETE FROM journal_listeners WHERE listener_id = $1");

/** Removes the rows expired more than `$1` milliseconds ago (of listeners that died without removing theirs). */
export const PURGE = sql("purge_journal_listeners", `DELETE FROM journal_listeners WHERE expires_at < ${DB_NOW} - $1::bigint`);

/** Announces a change of a listener's runs on the wake channel; pg_notify takes the channel's name unquoted. */
export const ANNOUNCE = sql("announce_journal_listener", "SELECT pg_notify($1, $2)");
