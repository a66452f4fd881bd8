import type { JournalCompaction } from "../../core/compaction.js";
import { insertMarker } from "./sqlite-compaction.js";
import type { QueueStat } from "../../core/flow-control.js";
import type { RunRecord } from "../../core/run.js";
import type { CopiedEntry, ListRunsQuery, NewRun, RunCount, RunEntriesQuery, RunEntry, RunFilter, RunPage, RunStore } from "../../core/store.js";
import { newDebouncedRun, rebounce } from "../common/debounce.js";
import { decodeCursor, encodeCursor, pageLimit } from "../common/list-query.js";
import { copiedRun } from "../common/run-state.js";
import type { SqliteConnection } from "./sqlite-connection.js";
import { toRun, runParams, type StateRow } from "./sqlite-rows.js";
import { listRunEntries } from "./sqlite-run-entries.js";
import { countRunsQuery, listRunsQuery } from "./sqlite-runs-queries.js";
import type { SqliteWriter } from "./sqlite-write.js";

/** The {@link RunStore} part of {@link SqliteStore}: creating runs and reading their rows. */
export class SqliteRuns implements RunStore {
  constructor(
    private readonly c: SqliteConnection,
    private readonly w: SqliteWriter,
  ) {}

  /** See {@link Store.createRun}. */
  async createRun(run: NewRun, now: number): Promise<{ run: RunRecord; created: boolean }> {
    return this.c.immediate(() => {
      const existing = this.w.loadRun(run.runId);
      if (existing) return { run: existing, created: false };
      return { run: this.w.insertRun(run, now), created: true };
    });
  }

  /** See {@link Store.createRuns}. */
  async createRuns(runs: readonly NewRun[], now: number): Promise<{ run: RunRecord; created: boolean }[]> {
    return this.c.immediate(() =>
      runs.map((run) => {
        const existing = this.w.loadRun(run.runId);
        if (existing) return { run: existing, created: false };
        return { run: this.w.insertRun(run, now), created: true };
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
    return this.c.immediate(() => {
      const existing = this.w.loadRun(run.runId);
      if (existing) return { run: existing, created: false };
      const copied = copiedRun(run, entries, now);
      if (run.blobs) this.w.insertBlobs(run.blobs, now);
      this.c.q.insertRun.run(runParams(copied.run));
      this.w.insertEntries(copied.entries);
      for (const t of copied.texts) this.c.q.insertText.run(t.text, run.runId, t.seq, t.opKey);
      for (const rows of copied.agentRows) this.w.agentRows.apply(rows);
      insertMarker(this.c.db, run.runId, compaction);
      return { run: copied.run, created: true };
    });
  }

  /** See {@link Store.listRunEntries}. */
  async listRunEntries(query: RunEntriesQuery): Promise<RunEntry[]> {
    return listRunEntries(this.c.db, query);
  }

  /** See {@link Store.countRuns}. */
  async countRuns(filter?: RunFilter): Promise<RunCount[]> {
    const rows =
      filter === undefined
        ? this.c.q.countRuns.all()
        : (({ text, values }) => this.c.q.prepared(text).all(...values))(countRunsQuery(filter, [...new Set(filter.status ?? [])]));
    return (rows as RunCount[]).map((row) => ({ workflow: row.workflow, status: row.status, count: Number(row.count) }));
  }

  /** See {@link Store.debounceRun}. */
  async debounceRun(run: NewRun, key: string, startAt: number, now: number): Promise<{ run: RunRecord; created: boolean }> {
    return this.c.immediate(() => {
      const found = this.c.flow.findDebounced(run.workflow, key);
      if (found !== undefined) {
        const next = rebounce(this.w.mustLoadRun(found), run.input, startAt, now);
        this.c.flow.rebounce(next.run);
        this.w.insertEntries([next.entry]);
        return { run: next.run, created: false };
      }
      const { record, entries } = newDebouncedRun(run, startAt, now);
      this.c.q.insertRun.run(runParams(record));
      this.c.flow.setDebounce(run.runId, key, run.flow);
      this.w.insertEntries(entries);
      return { run: record, created: true };
    });
  }

  /** See {@link Store.queueStats}. */
  async queueStats(now: number): Promise<QueueStat[]> {
    return this.c.flow.stats(now);
  }

  /** See {@link Store.getRun}. */
  async getRun(runId: string): Promise<RunRecord | undefined> {
    return this.w.loadRun(runId);
  }

  /** See {@link Store.listRuns}. */
  async listRuns(query: ListRunsQuery): Promise<RunPage> {
    const limit = pageLimit(query.limit);
    const cursor = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
    const { text, values } = listRunsQuery(query, [...new Set(query.status ?? [])], cursor, limit + 1);
    const rows = (this.c.q.prepared(text).all(...values) as (StateRow & { input: string })[]).map(toRun);
    const runs = rows.slice(0, limit);
    const last = runs[runs.length - 1];
    return rows.length > limit && last ? { runs, nextCursor: encodeCursor(last) } : { runs };
  }
}
