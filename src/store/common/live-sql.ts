import { TERMINAL_STATUSES_SQL } from "../../core/run.js";

/**
 * SQL both SQL stores share for run tags, run values and deadlines (migrations `run_tags`,
 * `run_values`, `run_deadlines`). `param(i)` writes the i-th (1-based) placeholder of the backend.
 */

/** One tag condition on `runs` for `listRuns({ tags })`: an indexed probe of `run_tags (key, value, run_id)`. */
export function tagCondition(keyParam: string, valueParam: string): string {
  return `EXISTS (SELECT 1 FROM run_tags t WHERE t.key = ${keyParam} AND t.value = ${valueParam} AND t.run_id = runs.run_id)`;
}

/** Due deadlines of live runs, earliest first: `(now, limit)`. */
export function dueDeadlinesSql(param: (i: number) => string): string {
  return `SELECT d.run_id AS "runId", d.due_at AS "dueAt" FROM run_deadlines d JOIN runs r ON r.run_id = d.run_id
    WHERE d.due_at <= ${param(1)} AND r.status NOT IN ${TERMINAL_STATUSES_SQL}
    ORDER BY d.due_at, d.run_id LIMIT ${param(2)}`;
}

/** Tags as rows `[runId, key, value]`. */
export function tagRows(runId: string, tags: Record<string, string> | undefined): [string, string, string][] {
  return tags ? Object.entries(tags).map(([key, value]) => [runId, key, value]) : [];
}
