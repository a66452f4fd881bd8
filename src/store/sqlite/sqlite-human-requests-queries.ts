import type { ListHumanRequestsQuery } from "../../core/store.js";
import { HUMAN_COLUMNS } from "./sqlite-rows.js";

// The statements of human requests for the SQLite store (see sqlite-human-requests.ts).

export const INSERT_HUMAN = `INSERT INTO human_requests (request_id, run_id, op_key, question, options, status, answer, timeout_at, created_at, answered_at, context, closed_reason)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (request_id) DO NOTHING`;
export const GET_HUMAN = `SELECT ${HUMAN_COLUMNS} FROM human_requests WHERE request_id = ?`;
/** Closes a finished run's pending requests. */
export const CLOSE_HUMANS = "UPDATE human_requests SET status = 'closed', closed_reason = ?, answered_at = ? WHERE run_id = ? AND status = 'pending'";
/** A retried run's closed requests are pending again. */
export const REOPEN_HUMANS = "UPDATE human_requests SET status = 'pending', closed_reason = NULL, answered_at = NULL WHERE run_id = ? AND status = 'closed'";
export const ANSWER_HUMAN = "UPDATE human_requests SET status = 'answered', answer = ?, answered_at = ? WHERE request_id = ? AND status = 'pending'";
export const EXTEND_HUMAN = "UPDATE human_requests SET timeout_at = ? WHERE request_id = ? AND status = 'pending'";

/** The listHumanRequests query for these filters, with its parameters. */
export function listHumanQuery(query: ListHumanRequestsQuery, limit: number): { text: string; values: unknown[] } {
  const where: string[] = [];
  const values: unknown[] = [];
  const desc = query.order === "desc";
  if (query.status !== undefined) {
    where.push("status = ?");
    values.push(query.status);
  }
  if (query.runId !== undefined) {
    where.push("run_id = ?");
    values.push(query.runId);
  }
  if (query.runIdPrefix !== undefined && query.runIdPrefix !== "") {
    where.push("substr(run_id, 1, ?) = ?");
    values.push([...query.runIdPrefix].length, query.runIdPrefix);
  }
  if (query.after !== undefined) {
    where.push(`(created_at, request_id) ${desc ? "<" : ">"} (?, ?)`);
    values.push(query.after.createdAt, query.after.requestId);
  }
  values.push(limit);
  const direction = desc ? "DESC" : "ASC";
  return {
    text: `SELECT ${HUMAN_COLUMNS} FROM human_requests ${where.length > 0 ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY created_at ${direction}, request_id ${direction} LIMIT ?`,
    values,
  };
}
