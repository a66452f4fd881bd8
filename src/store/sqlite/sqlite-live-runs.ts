import type { LiveRunStore, RunDeadline, RunValue, RunValueKind } from "../../core/store.js";
import type { SqliteConnection } from "./sqlite-connection.js";

/** The {@link LiveRunStore} part of {@link SqliteStore}: run tags, published values and replies, and deadlines. */
export class SqliteLiveRuns implements LiveRunStore {
  constructor(private readonly c: SqliteConnection) {}

  /** See {@link Store.getRunTags}. */
  async getRunTags(runId: string): Promise<Record<string, string>> {
    return this.c.live.tags(runId);
  }

  /** See {@link Store.getRunValue}. */
  async getRunValue(runId: string, kind: RunValueKind, name: string): Promise<RunValue | undefined> {
    return this.c.live.getValue(runId, kind, name);
  }

  /** See {@link Store.listDueDeadlines}. */
  async listDueDeadlines(now: number, limit: number): Promise<RunDeadline[]> {
    return this.c.live.dueDeadlines(now, limit);
  }

  /** See {@link Store.clearDeadline}. */
  async clearDeadline(runId: string): Promise<boolean> {
    return this.c.live.clearDeadline(runId);
  }
}
