import type { ListHumanRequestsQuery } from "../../core/store.js";
import { HUMAN_COLUMNS } from "./postgres-rows.js";
import { sql } from "./postgres-queries.js";

// The statements of human requests for the PostgreSQL store (see postgres-human-requests.ts).

export const INSERT_HUMAN = sql(
  "insert_human",
  `INSERT INTO human_requests (request_id, run_id, op_key, question, options, status, answer, timeout_at, created_at, answered_at, context, closed_reason)
   VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
   ON CONFLICT (request_id) DO NOTHING`,
);
export const GET_HUMAN = sql("get_human", `SELECT ${HUMAN_COLUMNS} FROM human_requests WHERE request_id = $1`);
export const LOCK_HUMAN = sql("lock_human", `SELECT ${HUMAN_COLUMNS} FROM human_requests WHERE request_id = $1 FOR UPDATE`);
/** Closes the pending requests of finished runs ($1 run ids, $2 their final statuses, $3 the time). */
export const CLOSE_HUMANS = sql(
  "close_humans",
  `UPDATE human_requests h SET status = 'closed', closed_reason = c.reason, answered_at = $3
     FROM unnest($1::text[], $2::text[]) AS c (run_id, reason)
    WHERE h.run_id = c.run_id AND h.status = 'pending'`,
);
/** A retried run's closed requests are pending again. */
export const REOPEN_HUMANS = sql(
  "reopen_humans",
  "UPDATE human_requests SET status = 'pending', closed_reason = NULL, answered_at = NULL WHERE run_id = $1 AND status = 'closed'",
);
export const ANSWER_HUMAN = sql(
  "answer_human",
  "UPDATE human_requests SET status = 'answered', answer = $1, answered_at = $2 WHERE request_id = $3 AND status = 'pending'",
);
export const EXTEND_HUMAN = sql("extend_human", "UPDATE human_requests SET timeout_at = $1 WHERE request_id = $2 AND status = 'pending'");

/** The listHumanRequests query for these filters, with its parameters. */
export function listHumanQuery(query: ListHumanRequestsQuery, limit: number): { text: string; values: unknown[] } {
  const where: string[] = [];
  const values: unknown[] = [];
  const param = (value: unknown) => {
    values.push(value);
    return `$${values.length}`;
  };
  const desc = query.order === "desc";
  if (query.status !== undefined) where.push(`status = ${param(query.status)}`);
  if (query.runId !== undefined) where.push(`run_id = ${param(query.runId)}`);
  if (query.runIdPrefix !== undefined && query.runIdPrefix !== "") where.push(`starts_with(run_id, ${param(query.runIdPrefix)})`);
  if (query.after !== undefined) where.push(`(created_at, request_id) ${desc ? "<" : ">"} (${param(query.after.createdAt)}, ${param(query.after.requestId)})`);
  const direction = desc ? "DESC" : "ASC";
  const text = `SELECT ${HUMAN_COLUMNS} FROM human_requests ${where.length > 0 ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY created_at ${direction}, request_id ${direction} LIMIT ${param(limit)}`;
  return { text, values };
}
