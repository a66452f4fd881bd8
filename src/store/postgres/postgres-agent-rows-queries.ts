import { sql } from "./postgres-queries.js";

// The statements of an agent run's message and tool call rows for the PostgreSQL store (see postgres-agent-rows.ts):
// one per table and write, the writes taking one array per column for `unnest`.

/** Inserts the messages of one `agent.messages` entry. */
export const INSERT_MESSAGES = sql(
  "insert_agent_messages",
  `INSERT INTO agent_messages (run_id, seq, turn, role, kind, content, journal_seq, created_at)
    SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::text[], $5::text[], $6::json[], $7::bigint[], $8::bigint[])`,
);

/** Inserts the tool calls of one `agent.messages` entry, or records their results over the `called` rows. */
export const UPSERT_TOOL_CALLS = sql(
  "upsert_tool_calls",
  `INSERT INTO tool_calls (run_id, idempotency_key, call_id, tool, turn, status, args, result, called_seq, result_seq, created_at, updated_at)
    SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::text[], $7::json[], $8::json[], $9::bigint[], $10::bigint[], $11::bigint[], $12::bigint[])
    ON CONFLICT (run_id, idempotency_key) DO UPDATE SET status = excluded.status, result = excluded.result, result_seq = excluded.result_seq, updated_at = excluded.updated_at`,
);

/** See `Store.readAgentMessages`: `content` as its text, exactly as written. */
export const READ_AGENT_MESSAGES = sql(
  "read_agent_messages",
  `SELECT run_id AS "runId", seq::float8 AS seq, turn::float8 AS turn, role, kind, content::text AS content,
      journal_seq::float8 AS "journalSeq", created_at::float8 AS "createdAt"
    FROM agent_messages WHERE run_id = $1 AND seq >= $2 AND seq <= $3 ORDER BY seq LIMIT $4`,
);

/** See `Store.listToolCalls`. */
export const LIST_TOOL_CALLS = sql(
  "list_tool_calls",
  `SELECT run_id AS "runId", idempotency_key AS "idempotencyKey", call_id AS "callId", tool, turn::float8 AS turn, status,
      args::text AS args, result::text AS result, called_seq::float8 AS "calledSeq", result_seq::float8 AS "resultSeq",
      created_at::float8 AS "createdAt", updated_at::float8 AS "updatedAt"
    FROM tool_calls WHERE run_id = $1 ORDER BY called_seq, created_at, idempotency_key`,
);
