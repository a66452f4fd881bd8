import type { JournalCompaction } from "../../core/compaction.js";
import { insertMarker } from "./memory-compaction.js";
import type { QueueStat } from "../../core/flow-control.js";
import { isSystemWorkflow, type RunRecord } from "../../core/run.js";
import type { CopiedEntry, ListRunsQuery, NewRun, RunCount, RunEntriesQuery, RunEntry, RunFilter, RunPage, RunStore } from "../../core/store.js";
import { newDebouncedRun, rebounce } from "../common/debounce.js";
import { compareText, decodeCursor, encodeCursor, pageLimit } from "../common/list-query.js";
import { copiedRun } from "../common/run-state.js";
import { listRunEntries } from "./memory-run-entries.js";
import type { MemoryWriter } from "./memory-write.js";
import { applyAgentRows } from "./memory-agent-rows.js";

/** The {@link RunStore} part of {@link MemoryStore}: creating runs and reading their rows. */
export class MemoryRuns implements RunStore {
  constructor(private readonly w: MemoryWriter) {}

  /** See {@link Store.createRun}. */
  async createRun(run: NewRun, now: number): Promise<{ run: RunRecord; created: boolean }> {
    return this.w.t.atomic(() => {
      const existing = this.w.t.runs.get(run.runId);
      if (existing) return { run: { ...existing }, created: false };
      return { run: { ...this.w.insertRun(run, now) }, created: true };
    });
  }

  /** See {@link Store.createRuns}. */
  async createRuns(runs: readonly NewRun[], now: number): Promise<{ run: RunRecord; created: boolean }[]> {
    return this.w.t.atomic(() =>
      runs.map((run) => {
        const existing = this.w.t.runs.get(run.runId);
        if (existing) return { run: { ...existing }, created: false };
        return { run: { ...this.w.insertRun(run, now) }, created: true };
      }),
    );
  }

  /** See {@link Store.createRunWithJournal}. */
  async createRunWithJournal(
    run: NewRun,
    entries: readonly CopiedEntry[],
    now: number,
    compaction?: JournalCompaction,
  ): Promise<{ run: RunRecord; created: boolean }> {
    const t = this.w.t;
    return t.atomic(() => {
      const existing = t.runs.get(run.runId);
      if (existing) return { run: { ...existing }, created: false };
      const copied = copiedRun(run, entries, now);
      for (const text of copied.texts) t.putText(run.runId, text.seq, text.text);
      t.putBlobs(run.blobs, now);
      t.putRun(copied.run);
      t.append(copied.entries);
      for (const rows of copied.agentRows) applyAgentRows(t, rows);
      insertMarker(t, run.runId, compaction);
      return { run: { ...copied.run }, created: true };
    });
  }

  /** See {@link Store.listRunEntries}. */
  async listRunEntries(query: RunEntriesQuery): Promise<RunEntry[]> {
    return listRunEntries(this.w.t, query);
  }

  /** See {@link Store.countRuns}. */
  async countRuns(filter?: RunFilter): Promise<RunCount[]> {
    const counts = new Map<string, RunCount>();
    for (const run of this.w.t.runs.values()) {
      if (filter !== undefined && !this.matchesFilter(run, filter)) continue;
      const key = `${run.status}\u0000${run.workflow}`;
      const found = counts.get(key);
      if (found) found.count += 1;
      else counts.set(key, { workflow: run.workflow, status: run.status, count: 1 });
    }
    return [...counts.values()].sort((a, b) => compareText(a.workflow, b.workflow) || compareText(a.status, b.status));
  }

  /** See {@link Store.debounceRun}. */
  async debounceRun(run: NewRun, key: string, startAt: number, now: number): Promise<{ run: RunRecord; created: boolean }> {
    const { t, flow } = this.w;
    return t.atomic(() => {
      const found = [...t.runs.values()].find((r) => r.workflow === run.workflow && r.leaseEpoch === 0 && flow.debounceKey(r.runId) === key);
      if (found) {
        const next = rebounce(found, run.input, startAt, now);
        t.putRun(next.run);
        t.append([next.entry]);
        return { run: { ...next.run }, created: false };
      }
      const { record, entries } = newDebouncedRun(run, startAt, now);
      t.putRun(record);
      flow.setDebounce(run.runId, key, run.flow);
      t.append(entries);
      return { run: { ...record }, created: true };
    });
  }

  /** See {@link Store.queueStats}. */
  async queueStats(now: number): Promise<QueueStat[]> {
    return this.w.flow.stats([...this.w.t.runs.values()], now);
  }

  /** See {@link Store.getRun}. */
  async getRun(runId: string): Promise<RunRecord | undefined> {
    const run = this.w.t.runs.get(runId);
    return run && { ...run };
  }

  /** See {@link Store.listRuns}. */
  async listRuns(query: ListRunsQuery): Promise<RunPage> {
    const limit = pageLimit(query.limit);
    const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
    const matches = [...this.w.t.runs.values()].filter(
      (run) =>
        this.matchesFilter(run, query) &&
        (!after || run.createdAt < after.createdAt || (run.createdAt === after.createdAt && compareText(run.runId, after.runId) < 0)),
    );
    matches.sort((a, b) => b.createdAt - a.createdAt || compareText(b.runId, a.runId));
    const runs = matches.slice(0, limit).map((run) => ({ ...run }));
    const last = runs[runs.length - 1];
    return matches.length > limit && last ? { runs, nextCursor: encodeCursor(last) } : { runs };
  }

  /** The run passes every filter of `query` (a listing's or a count's). */
  private matchesFilter(run: RunRecord, query: RunFilter): boolean {
    const statuses = query.status ?? [];
    const live = this.w.live;
    return (
      (statuses.length === 0 || statuses.includes(run.status)) &&
      (query.workflow === undefined ? query.excludeSystem !== true || !isSystemWorkflow(run.workflow) : run.workflow === query.workflow) &&
      (query.parentRunId === undefined || run.parentRunId === query.parentRunId) &&
      (query.runIdPrefix === undefined || run.runId.startsWith(query.runIdPrefix)) &&
      (query.q === undefined || query.q === "" || matchesText(run, query.q.toLowerCase(), live.tags.get(run.runId) ?? {})) &&
      (query.createdAfter === undefined || run.createdAt > query.createdAfter) &&
      (query.createdBefore === undefined || run.createdAt < query.createdBefore) &&
      live.matches(run.runId, query.tags)
    );
  }
}

/** `listRuns({ q })`: the run's id, workflow or error message contains `lowered` (already lower case). */
function matchesText(run: RunRecord, lowered: string, tags: Record<string, string>): boolean {
  if (run.runId.toLowerCase().includes(lowered) || run.workflow.toLowerCase().includes(lowered)) return true;
  if (run.input.toLowerCase().includes(lowered)) return true;
  if (Object.entries(tags).some(([key, value]) => `${key}:${value}`.toLowerCase().includes(lowered))) return true;
  if (run.error === null) return false;
  try {
    const message = (JSON.parse(run.error) as { message?: unknown } | null)?.message;
    return typeof message === "string" && message.toLowerCase().includes(lowered);
  } catch {
    return false;
  }
}
