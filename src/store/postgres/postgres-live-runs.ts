import type { NewRun, RunDeadline, RunValue, RunValueKind, LiveRunStore } from "../../core/store.js";
import { tagRows } from "../common/live-sql.js";
import type { SideEffect } from "../common/plan-write.js";
import type { PostgresConnection } from "./postgres-connection.js";
import { CLEAR_DEADLINE, DUE_DEADLINES, GET_TAGS, GET_VALUE, INSERT_DEADLINES, INSERT_TAGS, PUT_VALUE } from "./postgres-live-runs-queries.js";
import type { Tx } from "./postgres-tx.js";

/** The {@link LiveRunStore} part of {@link PostgresStore}: run tags, published values and replies, and deadlines. */
export class PostgresLiveRuns implements LiveRunStore {
  constructor(private readonly db: PostgresConnection) {}

  /** See {@link Store.getRunTags}. */
  async getRunTags(runId: string): Promise<Record<string, string>> {
    return tagsOf(await this.db.query<{ key: string; value: string }>(GET_TAGS, [runId]));
  }

  /** See {@link Store.getRunValue}. */
  async getRunValue(runId: string, kind: RunValueKind, name: string): Promise<RunValue | undefined> {
    const [row] = await this.db.query<RunValue>(GET_VALUE, [runId, kind, name]);
    return row;
  }

  /** See {@link Store.listDueDeadlines}. */
  async listDueDeadlines(now: number, limit: number): Promise<RunDeadline[]> {
    return this.db.query<RunDeadline>(DUE_DEADLINES, [now, limit]);
  }

  /** See {@link Store.clearDeadline}. */
  async clearDeadline(runId: string): Promise<boolean> {
    return (await this.db.query(CLEAR_DEADLINE, [runId])).length > 0;
  }
}

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
