import { indexOfSeq } from "./memory-compaction.js";
import type { JournalEntry } from "../../core/journal.js";
import { isCheckpoint, readForResume } from "../../core/resume.js";
import type { CommitResult, JournalStore, JournalTextHit, RunWrite } from "../../core/store.js";
import { fenceReason } from "../common/run-state.js";
import { queryTerms } from "../common/search-terms.js";
import type { MemoryWriter } from "./memory-write.js";

/** The {@link JournalStore} part of {@link MemoryStore}: reading journals and the group commit. */
export class MemoryJournal implements JournalStore {
  constructor(private readonly w: MemoryWriter) {}

  /** See {@link Store.readJournal}. */
  async readJournal(runId: string, options: { afterSeq?: number; limit?: number } = {}): Promise<JournalEntry[]> {
    const entries = (this.w.t.journal.get(runId) ?? []).filter((entry) => entry.seq > (options.afterSeq ?? 0));
    return (options.limit === undefined ? entries : entries.slice(0, Math.max(0, options.limit))).map((entry) => ({ ...entry }));
  }

  /** See {@link Store.searchJournal}: a scan of the run's journal, scored by the query words each text contains. */
  async searchJournal(runId: string, query: string, limit: number): Promise<JournalTextHit[]> {
    const terms = queryTerms(query);
    if (terms.length === 0) return [];
    const hits: (JournalTextHit & { score: number })[] = [];
    // Compacted step results stay searchable (the index outlives the entries, as in the SQL stores).
    const compacted = [...this.w.t.compactedTextKeys]
      .filter(([key]) => key.startsWith(`${runId}\0`))
      .map(([key, opKey]) => ({ kind: "step.completed", seq: Number(key.slice(runId.length + 1)), opKey }));
    for (const entry of [...compacted, ...(this.w.t.journal.get(runId) ?? [])]) {
      if (entry.kind !== "step.completed") continue;
      // The index, not the payload: a payload may be offloaded or encrypted (withPayloads).
      const text = this.w.t.texts.get(`${runId}\0${entry.seq}`);
      if (text === undefined) continue;
      const words = new Set(text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []);
      const score = terms.filter((term) => words.has(term)).length;
      if (score > 0) hits.push({ seq: entry.seq, opKey: entry.opKey ?? "", text, score });
    }
    hits.sort((a, b) => b.score - a.score || a.seq - b.seq);
    return hits.slice(0, Math.max(0, limit)).map(({ seq, opKey, text }) => ({ seq, opKey, text }));
  }

  /** See {@link Store.readJournalForResume}. */
  async readJournalForResume(runId: string): Promise<JournalEntry[]> {
    // In seq order, with gaps once compacted: found by binary search.
    const journal = this.w.t.journal.get(runId) ?? [];
    return readForResume({
      latestCheckpointBelow: async (below) => {
        for (let i = indexOfSeq(journal, below) - 1; i >= 0; i--) if (isCheckpoint(journal[i]!.kind)) return { ...journal[i]! };
        return undefined;
      },
      range: async (from, below) => journal.slice(indexOfSeq(journal, from), indexOfSeq(journal, below)).map((entry) => ({ ...entry })),
      seqs: async (seqs) =>
        seqs.flatMap((seq) => {
          const entry = journal[indexOfSeq(journal, seq)];
          return entry?.seq === seq ? [{ ...entry }] : [];
        }),
    });
  }

  /** See {@link Store.commit}. */
  async commit(writes: RunWrite[], now: number): Promise<CommitResult[]> {
    const w = this.w;
    return w.t.atomic(() =>
      writes.map((write): CommitResult => {
        const run = w.t.runs.get(write.runId);
        const refused = fenceReason(run, write.epoch, write.entries);
        if (refused || !run) return { ok: false, reason: refused ?? "not-found" };
        const firstSeq = run.lastSeq + 1;
        w.t.putBlobs(write.blobs, now);
        w.applyEntries(run, write.epoch, write.entries, now);
        return { ok: true, firstSeq, lastSeq: run.lastSeq + write.entries.length };
      }),
    );
  }
}
