import type { NewRun } from "../../core/store.js";
import { dueDeadlinesSql, tagRows } from "../common/live-sql.js";
import type { SideEffect } from "../common/plan-write.js";
import type { Sql } from "./postgres-queries.js";
import type { Tx } from "./postgres-tx.js";

/** Run tags, published values and replies, and deadlines for the PostgreSQL store (see `store/common/live-sql.ts`). */

const INSERT_TAGS: Sql = {
  name: "cairn_insert_tags",
  text: `INSERT INTO run_tags (run_id, key, value) SELECT * FROM unnest($1::text[], $2::text[], $3::text[]) ON CONFLICT DO NOTHING`,
};

const INSERT_DEADLINES: Sql = {
  name: "cairn_insert_deadlines",
  text: `INSERT INTO run_deadlines (run_id, due_at) SELECT * FROM unnest($1::text[], $2::bigint[]) ON CONFLICT (run_id) DO UPDATE SET due_at = excluded.due_at`,
};

const PUT_VALUE: Sql = {
  name: "cairn_put_value",
  text: `INSERT INTO run_values (run_id, kind, name, value, seq, at) VALUES ($1, $2, $3, $4, $5, $6)
    ON CONFLICT (run_id, kind, name) DO UPDATE SET value = excluded.value, seq = excluded.seq, at = excluded.at`,
};

/** See `Store.getRunValue`. */
export const GET_VALUE: Sql = {
  name: "cairn_get_value",
  text: `SELECT run_id AS "runId", kind, name, value, seq::float8 AS seq, at::float8 AS at FROM run_values WHERE run_id = $1 AND kind = $2 AND name = $3`,
};

/** See `Store.getRunTags`. */
export const GET_TAGS: Sql = { name: "cairn_get_tags", text: "SELECT key, value FROM run_tags WHERE run_id = $1 ORDER BY key" };

/** See `Store.listDueDeadlines`. */
export const DUE_DEADLINES: Sql = {
  name: "cairn_due_deadlines",
  text: dueDeadlinesSql((i) => `$${i}`).replace('d.due_at AS "dueAt"', 'd.due_at::float8 AS "dueAt"'),
};

/** See `Store.clearDeadline`. */
export const CLEAR_DEADLINE: Sql = { name: "cairn_clear_deadline", text: "DELETE FROM run_deadlines WHERE run_id = $1 RETURNING run_id" };

/** Writes the tags and deadlines of runs just inserted, one statement each (none when no run has any). */
export async function insertLive(tx: Tx, runs: readonly NewRun[]): Promise<void> {
  const tags = runs.flatMap((run) => tagRows(run.runId, run.tags));
  if (tags.length > 0) await tx.query(INSERT_TAGS, [tags.map((t) => t[0]), tags.map((t) => t[1]), tags.map((t) => t[2])]);
  const deadlines = runs.filter((run) => run.deadlineAt !== undefined);
  if (deadlines.length > 0) await tx.query(INSERT_DEADLINES, [deadlines.map((r) => r.runId), deadlines.map((r) => r.deadlineAt)]);
}

/** Replaces a run's value row. */
export async function putValue(tx: Tx, effect: Extract<SideEffect, { kind: "put-value" }>): Promise<void> {
  await tx.query(PUT_VALUE, [effect.runId, effect.valueKind, effect.name, effect.value, effect.seq, effect.at]);
}

/** Tag rows as an object. */
export function tagsOf(rows: readonly { key: string; value: string }[]): Record<string, string> {
  const tags: Record<string, string> = {};
  for (const row of rows) tags[row.key] = row.value;
  return tags;
}
