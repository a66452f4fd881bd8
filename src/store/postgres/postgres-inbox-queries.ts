import { INBOX_COLUMNS } from "./postgres-rows.js";
import { sql } from "./postgres-queries.js";

// The statements of the inbox for the PostgreSQL store (see postgres-inbox.ts).

export const INSERT_INBOX = sql(
  "insert_inbox",
  `INSERT INTO inbox (run_id, type, event_id, payload, consumed_seq, received_at) VALUES ($1, $2, $3, $4, NULL, $5)
   ON CONFLICT (run_id, event_id) DO NOTHING`,
);
export const FIND_INBOX = sql("find_inbox", "SELECT id FROM inbox WHERE run_id = $1 AND event_id = $2");
export const LOCK_INBOX = sql(
  "lock_inbox",
  `SELECT id, run_id AS "runId", consumed_seq AS "consumedSeq" FROM inbox WHERE id = ANY($1::bigint[]) ORDER BY id FOR UPDATE`,
);
export const CONSUME_INBOX = sql(
  "consume_inbox",
  "UPDATE inbox AS i SET consumed_seq = c.seq FROM unnest($1::bigint[], $2::bigint[]) AS c(id, seq) WHERE i.id = c.id",
);
export const PENDING_EVENTS = sql(
  "pending_events",
  `SELECT ${INBOX_COLUMNS} FROM inbox WHERE run_id = $1 AND type = $2 AND consumed_seq IS NULL ORDER BY id LIMIT $3`,
);
export const LIST_INBOX = sql("list_inbox", `SELECT ${INBOX_COLUMNS} FROM inbox WHERE run_id = $1 ORDER BY id`);
/** The kind of a run's entry at a seq: its last entry says whether it continued as new. */
export const ENTRY_KIND = sql("entry_kind", "SELECT kind FROM journal WHERE run_id = $1 AND seq = $2");
/** A continued run's unconsumed events go to the run that continues it (ids, so arrival order, kept). */
export const MOVE_INBOX = sql("move_inbox", "UPDATE inbox SET run_id = $1 WHERE run_id = $2 AND consumed_seq IS NULL");
