import type { ListOutboxQuery, NewOutboxMessage, OutboxClaimRequest, OutboxSettlement } from "../../core/outbox.js";
import { pageLimit } from "../common/list-query.js";
import { nowParam as now, sql, type Sql } from "./postgres-queries.js";

/** Columns of an outbox message, aliased to {@link OutboxMessage} fields. */
export const OUTBOX_COLUMNS = `id, message_id AS "messageId", run_id AS "runId", op_key AS "opKey", seq, topic, payload, status, attempts,
  next_attempt_at AS "nextAttemptAt", last_error AS "lastError", lease_owner AS "leaseOwner", created_at AS "createdAt", delivered_at AS "deliveredAt"`;

// The statements of the outbox for the PostgreSQL store (see postgres-outbox.ts). `now(n)` is `$n` as the caller's time,
// or the statement's database clock when it is NULL (database-clock mode).

/** Inserts a message emitted by a commit: $1 message id … $7 created at. */
export const INSERT_OUTBOX = sql(
  "outbox_insert",
  `INSERT INTO outbox (message_id, run_id, op_key, seq, topic, payload, status, attempts, next_attempt_at, created_at)
   VALUES ($1, $2, $3, $4, $5, $6, 'pending', 0, $7, $7) ON CONFLICT (message_id) DO NOTHING`,
);

/** Parameters of {@link INSERT_OUTBOX}. */
export function insertOutboxParams(m: NewOutboxMessage): unknown[] {
  return [m.messageId, m.runId, m.opKey, m.seq, m.topic, m.payload, m.createdAt];
}

/**
 * Claims due messages: $1 now (NULL: database clock), $2 topics, $3 limit, $4 owner, $5 lease ms.
 * SKIP LOCKED, so concurrent claimers take different messages and never wait for each other.
 */
export const CLAIM_OUTBOX = sql(
  "outbox_claim",
  `WITH due AS (
     SELECT id FROM outbox WHERE status = 'pending' AND next_attempt_at <= ${now(1)} AND topic = ANY($2::text[])
     ORDER BY next_attempt_at, id LIMIT $3 FOR UPDATE SKIP LOCKED)
   UPDATE outbox o SET attempts = o.attempts + 1, lease_owner = $4, next_attempt_at = ${now(1)} + $5::bigint
   FROM due WHERE o.id = due.id
   RETURNING ${OUTBOX_COLUMNS.replace(/^id,/, "o.id,")}`,
);

/** Parameters of {@link CLAIM_OUTBOX}; `now` null reads the database clock. */
export function claimOutboxParams(request: OutboxClaimRequest, nowParam: number | null): unknown[] {
  return [nowParam, [...request.topics], request.limit, request.owner, request.leaseMs];
}

/** $1 now, $2 message id, $3 owner, $4 attempts. */
export const DELIVER_OUTBOX = sql(
  "outbox_deliver",
  `UPDATE outbox SET status = 'delivered', delivered_at = ${now(1)}, lease_owner = NULL
   WHERE message_id = $2 AND status = 'pending' AND lease_owner = $3 AND attempts = $4
   RETURNING id`,
);

/** $1 now, $2 message id, $3 owner, $4 attempts, $5 retry at (NULL: dead), $6 error. */
export const FAIL_OUTBOX = sql(
  "outbox_fail",
  `UPDATE outbox SET status = CASE WHEN $5::bigint IS NULL THEN 'dead' ELSE 'pending' END,
     next_attempt_at = COALESCE($5::bigint, ${now(1)}), last_error = $6, lease_owner = NULL
   WHERE message_id = $2 AND status = 'pending' AND lease_owner = $3 AND attempts = $4
   RETURNING id`,
);

/** Parameters of {@link DELIVER_OUTBOX} or {@link FAIL_OUTBOX}. */
export function settleOutboxParams(s: OutboxSettlement, nowParam: number | null): { statement: Sql; params: unknown[] } {
  const base = [nowParam, s.messageId, s.owner, s.attempts];
  return s.outcome === "delivered" ? { statement: DELIVER_OUTBOX, params: base } : { statement: FAIL_OUTBOX, params: [...base, s.retryAt, s.error] };
}

/** $1 now, $2 message id. */
export const RETRY_OUTBOX = sql(
  "outbox_retry",
  `UPDATE outbox SET status = 'pending', attempts = 0, next_attempt_at = ${now(1)}, lease_owner = NULL WHERE message_id = $2 AND status = 'dead'
   RETURNING id`,
);

/** $1 message id. */
export const GET_OUTBOX = sql("outbox_get", `SELECT ${OUTBOX_COLUMNS} FROM outbox WHERE message_id = $1`);

/** The statement and parameters of a filtered list. */
export function listOutboxQuery(query: ListOutboxQuery): { text: string; params: unknown[] } | undefined {
  const where: string[] = [];
  const params: unknown[] = [];
  const add = (condition: (n: number) => string, value: unknown): void => {
    params.push(value);
    where.push(condition(params.length));
  };
  if (query.status !== undefined) {
    if (query.status.length === 0) return undefined;
    add((n) => `status = ANY($${n}::text[])`, [...query.status]);
  }
  if (query.topic !== undefined) add((n) => `topic = $${n}`, query.topic);
  if (query.runId !== undefined) add((n) => `run_id = $${n}`, query.runId);
  if (query.afterId !== undefined) add((n) => `id > $${n}`, query.afterId);
  params.push(pageLimit(query.limit));
  return { text: `SELECT ${OUTBOX_COLUMNS} FROM outbox ${where.length > 0 ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY id LIMIT $${params.length}`, params };
}
