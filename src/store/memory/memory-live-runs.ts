import { isTerminal } from "../../core/run.js";
import type { LiveRunStore, RunDeadline, RunValue, RunValueKind } from "../../core/store.js";
import type { MemoryWriter } from "./memory-write.js";

/** The {@link LiveRunStore} part of {@link MemoryStore}: run tags, published values and replies, and deadlines. */
export class MemoryLiveRuns implements LiveRunStore {
  constructor(private readonly w: MemoryWriter) {}

  /** See {@link Store.getRunTags}. */
  async getRunTags(runId: string): Promise<Record<string, string>> {
    return { ...this.w.live.tags.get(runId) };
  }

  /** See {@link Store.getRunValue}. */
  async getRunValue(runId: string, kind: RunValueKind, name: string): Promise<RunValue | undefined> {
    return this.w.live.getValue(runId, kind, name);
  }

  /** See {@link Store.listDueDeadlines}. */
  async listDueDeadlines(now: number, limit: number): Promise<RunDeadline[]> {
    return this.w.live.due(now, limit, (runId) => {
      const run = this.w.t.runs.get(runId);
      return run !== undefined && !isTerminal(run.status);
    });
  }

  /** See {@link Store.clearDeadline}. */
  async clearDeadline(runId: string): Promise<boolean> {
    if (!this.w.live.deadlines.has(runId)) return false;
    this.w.t.atomic(() => this.w.t.putIn(this.w.live.deadlines, runId, undefined));
    return true;
  }
}
