import type Database from "better-sqlite3";
import { INSERT_TAG, INSERT_DEADLINE, PUT_VALUE, GET_VALUE, GET_TAGS, CLEAR_DEADLINE } from "./sqlite-live-queries.js";
import type { NewRun, RunDeadline, RunValue, RunValueKind } from "../../core/store.js";
import { dueDeadlinesSql, tagRows } from "../common/live-sql.js";
import type { SideEffect } from "../common/plan-write.js";

/**
 * The statements of run tags, published values and replies, and deadlines for {@link SqliteStore} (see `store/common/live-sql.ts`).
 * Writes run inside the caller's transaction.
 */
export class SqliteLiveStatements {
  private readonly insertTag: Database.Statement;
  private readonly insertDeadline: Database.Statement;
  private readonly putValueStatement: Database.Statement;
  private readonly getValueStatement: Database.Statement;
  private readonly getTags: Database.Statement;
  private readonly due: Database.Statement;
  private readonly clear: Database.Statement;

  constructor(db: Database.Database) {
    this.insertTag = db.prepare(INSERT_TAG);
    this.insertDeadline = db.prepare(INSERT_DEADLINE);
    this.putValueStatement = db.prepare(PUT_VALUE);
    this.getValueStatement = db.prepare(GET_VALUE);
    this.getTags = db.prepare(GET_TAGS);
    this.due = db.prepare(dueDeadlinesSql(() => "?"));
    this.clear = db.prepare(CLEAR_DEADLINE);
  }

  /** Writes the tags and deadline of a run just inserted. */
  insert(run: NewRun): void {
    for (const row of tagRows(run.runId, run.tags)) this.insertTag.run(...row);
    if (run.deadlineAt !== undefined) this.insertDeadline.run(run.runId, run.deadlineAt);
  }

  putValue(effect: Extract<SideEffect, { kind: "put-value" }>): void {
    this.putValueStatement.run(effect.runId, effect.valueKind, effect.name, effect.value, effect.seq, effect.at);
  }

  getValue(runId: string, kind: RunValueKind, name: string): RunValue | undefined {
    return this.getValueStatement.get(runId, kind, name) as RunValue | undefined;
  }

  tags(runId: string): Record<string, string> {
    const tags: Record<string, string> = {};
    for (const row of this.getTags.all(runId) as { key: string; value: string }[]) tags[row.key] = row.value;
    return tags;
  }

  dueDeadlines(now: number, limit: number): RunDeadline[] {
    return this.due.all(now, limit) as RunDeadline[];
  }

  clearDeadline(runId: string): boolean {
    return this.clear.run(runId).changes > 0;
  }
}
