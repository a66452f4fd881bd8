import type { JournalEntry } from "../../core/journal.js";
import { readForResume } from "../../core/resume.js";
import type { CommitResult, JournalStore, JournalTextHit, RunWrite } from "../../core/store.js";
import { acceptedBlobs } from "../common/blob-rows.js";
import { isPlainAppend } from "../common/plan-write.js";
import { fenceReason, type FenceState } from "../common/run-state.js";
import { queryTerms } from "../common/search-terms.js";
import type { SqliteConnection } from "./sqlite-connection.js";
import { toEntry, type EntryRow } from "./sqlite-rows.js";
import type { SqliteWriter } from "./sqlite-write.js";

/** The {@link JournalStore} part of {@link SqliteStore}: reading journals and the group commit. */
export class SqliteJournal implements JournalStore {
  constructor(
    private readonly c: SqliteConnection,
    private readonly w: SqliteWriter,
  ) {}

  /** See {@link Store.readJournal}. */
  async readJournal(runId: string, options: { afterSeq?: number; limit?: number } = {}): Promise<JournalEntry[]> {
    const limit = options.limit === undefined ? -1 : Math.max(0, options.limit);
    return (this.c.q.readJournal.all(runId, options.afterSeq ?? 0, limit) as EntryRow[]).map(toEntry);
  }

  /** See {@link Store.searchJournal}: FTS5, any of the query's words, ranked by bm25. */
  async searchJournal(runId: string, query: string, limit: number): Promise<JournalTextHit[]> {
    const terms = queryTerms(query);
    if (terms.length === 0) return [];
    const match = terms.map((term) => `"${term}"`).join(" OR ");
    return this.c.q.searchText.all(match, runId, Math.max(0, limit)) as JournalTextHit[];
  }

  /** See {@link Store.readJournalForResume}. */
  async readJournalForResume(runId: string): Promise<JournalEntry[]> {
    return readForResume({
      latestCheckpointBelow: async (below) => {
        const row = this.c.q.latestCheckpoint.get(runId, below) as EntryRow | undefined;
        return row && toEntry(row);
      },
      range: async (from, below) => (this.c.q.readJournalRange.all(runId, from, below) as EntryRow[]).map(toEntry),
      seqs: async (seqs) => (this.c.q.readJournalSeqs.all(runId, JSON.stringify(seqs)) as EntryRow[]).map(toEntry),
    });
  }

  /** See {@link Store.commit}. */
  async commit(writes: RunWrite[], now: number): Promise<CommitResult[]> {
    if (writes.length === 0) return [];
    return this.c.immediate(() => {
      // A step's outcome and the next step's intent come as two writes to one run. Plain appends
      // (common/plan-write isPlainAppend) change nothing on the run's row but its last seq and update
      // time: they read only what the fence needs (planEntries would derive the same row and entries),
      // and the row is written once, at the end or before any other kind of write, whose side
      // effects may read or change rows.
      const held = new Map<string, FenceState>();
      const writeHeld = () => {
        for (const [runId, row] of held) this.w.advanceSeq(runId, row.lastSeq, now);
        held.clear();
      };
      const results = writes.map((write): CommitResult => {
        const n = write.entries.length;
        if (!write.entries.every(isPlainAppend)) {
          writeHeld();
          const run = this.w.loadState(write.runId);
          const refused = fenceReason(run, write.epoch, write.entries);
          if (refused || !run) return { ok: false, reason: refused ?? "not-found" };
          this.w.applyEntries(run, write.epoch, write.entries, now);
          return { ok: true, firstSeq: run.lastSeq + 1, lastSeq: run.lastSeq + n };
        }
        const row = held.get(write.runId) ?? this.w.loadFence(write.runId);
        const refused = fenceReason(row, write.epoch, write.entries);
        if (refused || !row) return { ok: false, reason: refused ?? "not-found" };
        if (n > 0) {
          this.w.insertPlain(write.runId, row.lastSeq, write.epoch, write.entries, now);
          held.set(write.runId, { ...row, lastSeq: row.lastSeq + n });
        }
        return { ok: true, firstSeq: row.lastSeq + 1, lastSeq: row.lastSeq + n };
      });
      writeHeld();
      this.w.insertBlobs(acceptedBlobs(writes, results), now);
      return results;
    });
  }
}
