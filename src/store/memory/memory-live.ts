import type { NewRun, RunDeadline, RunValue, RunValueKind } from "../../core/store.js";
import type { MemoryTables } from "./memory-tables.js";

/**
 * The memory store's run tags, published values and replies, and deadlines: the tables of
 * migrations `run_tags`, `run_values` and `run_deadlines`, with the same rules. Changes go through
 * {@link MemoryTables.putIn}, so a failed transaction leaves none of them behind.
 */
export class MemoryLive {
  /** Tags by run id. */
  readonly tags = new Map<string, Record<string, string>>();
  /** Values by `runId\0kind\0name`. */
  readonly values = new Map<string, RunValue>();
  /** Deadlines by run id. */
  readonly deadlines = new Map<string, number>();

  constructor(private readonly t: MemoryTables) {}

  /** Stores what a new run carries besides its row and journal. */
  insert(run: NewRun): void {
    if (run.tags && Object.keys(run.tags).length > 0) this.t.putIn(this.tags, run.runId, { ...run.tags });
    if (run.deadlineAt !== undefined) this.t.putIn(this.deadlines, run.runId, run.deadlineAt);
  }

  /** Replaces a run's value row. */
  putValue(value: RunValue): void {
    this.t.putIn(this.values, valueKey(value.runId, value.kind, value.name), value);
  }

  getValue(runId: string, kind: RunValueKind, name: string): RunValue | undefined {
    const found = this.values.get(valueKey(runId, kind, name));
    return found && { ...found };
  }

  /** True when the run has every tag of `filter`. */
  matches(runId: string, filter: Record<string, string> | undefined): boolean {
    if (!filter) return true;
    const tags = this.tags.get(runId);
    return Object.entries(filter).every(([key, value]) => tags?.[key] === value);
  }

  due(now: number, limit: number, live: (runId: string) => boolean): RunDeadline[] {
    return [...this.deadlines]
      .filter(([runId, dueAt]) => dueAt <= now && live(runId))
      .sort((a, b) => a[1] - b[1] || (a[0] < b[0] ? -1 : 1))
      .slice(0, limit)
      .map(([runId, dueAt]) => ({ runId, dueAt }));
  }

  /** Forgets everything of a deleted run. */
  forget(runId: string): void {
    this.tags.delete(runId);
    this.deadlines.delete(runId);
    for (const key of [...this.values.keys()]) if (key.startsWith(`${runId}\u0000`)) this.values.delete(key);
  }
}

function valueKey(runId: string, kind: RunValueKind, name: string): string {
  return `${runId}\u0000${kind}\u0000${name}`;
}
