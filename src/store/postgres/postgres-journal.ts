import pg from "pg";
import type { JournalEntry } from "../../core/journal.js";
import { projectEntry } from "../../core/run.js";
import { readForResume } from "../../core/resume.js";
import type { CommitResult, JournalStore, JournalTextHit, RunWrite } from "../../core/store.js";
import { acceptedBlobs } from "../common/blob-rows.js";
import { isPlainAppend } from "../common/plan-write.js";
import { fenceReason } from "../common/run-state.js";
import { insertBlobs } from "./postgres-blobs.js";
import type { PostgresConnection } from "./postgres-connection.js";
import {
  APPEND_ONE,
  APPEND_PLAIN,
  APPEND_PLAIN_FN,
  COMPLETE_PLAIN_FN,
  LATEST_CHECKPOINT,
  NOT_HELD,
  READ_JOURNAL,
  READ_JOURNAL_RANGE,
  READ_JOURNAL_SEQS,
  SEARCH_TEXT,
} from "./postgres-journal-queries.js";
import { toEntry, type EntryRow } from "./postgres-rows.js";
import { queryTerms } from "../common/search-terms.js";
import { WriteSession } from "./postgres-write.js";

/** The {@link JournalStore} part of {@link PostgresStore}: reading journals and the group commit. */
export class PostgresJournal implements JournalStore {
  constructor(private readonly db: PostgresConnection) {}

  /** See {@link Store.readJournal}. */
  async readJournal(runId: string, options: { afterSeq?: number; limit?: number } = {}): Promise<JournalEntry[]> {
    const limit = options.limit === undefined ? null : Math.max(0, options.limit);
    return (await this.db.query<EntryRow>(READ_JOURNAL, [runId, options.afterSeq ?? 0, limit])).map(toEntry);
  }

  /** See {@link Store.searchJournal}: tsvector ('simple' configuration), any of the query's words, ranked by ts_rank. */
  async searchJournal(runId: string, query: string, limit: number): Promise<JournalTextHit[]> {
    const terms = queryTerms(query);
    if (terms.length === 0) return [];
    return this.db.query<JournalTextHit>(SEARCH_TEXT, [runId, terms.join(" | "), Math.max(0, limit)]);
  }

  /** See {@link Store.readJournalForResume}. */
  async readJournalForResume(runId: string): Promise<JournalEntry[]> {
    return readForResume({
      latestCheckpointBelow: async (below) => (await this.db.query<EntryRow>(LATEST_CHECKPOINT, [runId, below])).map(toEntry)[0],
      range: async (from, below) => (await this.db.query<EntryRow>(READ_JOURNAL_RANGE, [runId, from, below])).map(toEntry),
      seqs: async (seqs) => (await this.db.query<EntryRow>(READ_JOURNAL_SEQS, [runId, seqs])).map(toEntry),
    });
  }

  /**
   * See {@link Store.commit}: the whole batch is one transaction. A batch of step intents and
   * results (plain appends to running runs, without blobs) is one statement in one round trip, its
   * own transaction ({@link APPEND_PLAIN_FN}); when some run of it is not held under its epoch
   * that statement writes nothing and the batch takes the transaction below. There plain appends
   * again take one statement, and the writes it does not apply, and every other kind of write,
   * lock their runs and go through the write session, which says why a write is refused.
   */
  async commit(writes: RunWrite[], now: number): Promise<CommitResult[]> {
    if (writes.length === 0) return [];
    const completion = plainCompletion(writes);
    if (completion) {
      const results = await this.completePlain(writes, completion, now);
      if (results) return results;
    }
    const plain = plainAppends(writes);
    if (plain && !writes.some((write) => write.blobs && write.blobs.length > 0)) {
      const results = await this.appendPlain(writes, plain, now);
      if (results) return results;
    }
    return this.db.tx(now, async (tx) => {
      const results: (CommitResult | undefined)[] = new Array(writes.length);
      let rest = writes.map((_, i) => i);
      if (plain) {
        const rows = await tx.query<{ runId: string; base: string | number }>(APPEND_PLAIN, [...plain.params, tx.now, ...plain.entryParams]);
        const bases = new Map(rows.map((row) => [row.runId, Number(row.base)]));
        tx.journaled(bases.keys());
        rest = [];
        writes.forEach((write, i) => {
          const base = bases.get(write.runId);
          if (base === undefined) return void rest.push(i);
          const offset = plain.offsets[i]!;
          results[i] = { ok: true, firstSeq: base + offset + 1, lastSeq: base + offset + write.entries.length };
        });
        if (rest.length === 0) {
          await insertBlobs(tx, acceptedBlobs(writes, results));
          return results as CommitResult[];
        }
      }
      const session = new WriteSession(tx);
      await session.lock(rest.map((i) => writes[i]!.runId));
      for (const i of rest) {
        const write = writes[i]!;
        // Checked before anything is written, so a refused write leaves the transaction intact.
        const run = session.state(write.runId);
        const refused = fenceReason(run, write.epoch, write.entries);
        if (refused || !run) {
          results[i] = { ok: false, reason: refused ?? "not-found" };
          continue;
        }
        if (write.entries.length > 0) await session.append(run, write.epoch, write.entries);
        results[i] = { ok: true, firstSeq: run.lastSeq + 1, lastSeq: run.lastSeq + write.entries.length };
      }
      await session.flush();
      await insertBlobs(tx, acceptedBlobs(writes, results));
      return results as CommitResult[];
    });
  }

  /** The one-statement completion of a top-level run; undefined (nothing written) when it has a parent or is not held under the epoch. */
  private async completePlain(writes: readonly RunWrite[], output: string, now: number): Promise<CommitResult[] | undefined> {
    await this.db.ensureReady();
    const runner = this.db.runner;
    const { runId, epoch } = writes[0]!;
    const notice = runner.journalNotice([runId]);
    const entries = writes.flatMap((write) => write.entries);
    let rows: { base: string | number }[];
    try {
      rows = await runner.write(COMPLETE_PLAIN_FN, [
        runId,
        epoch,
        runner.nowParam(now),
        output,
        entries.map((entry) => entry.kind),
        entries.map((entry) => entry.opKey),
        entries.map((entry) => entry.payload),
        notice.channel,
        notice.payload,
      ]);
    } catch (error) {
      if (error instanceof pg.DatabaseError && error.code === NOT_HELD) return undefined;
      throw error;
    }
    let next = Number(rows[0]!.base) + 1;
    return writes.map((write) => {
      const result: CommitResult = { ok: true, firstSeq: next, lastSeq: next + write.entries.length - 1 };
      next += write.entries.length;
      return result;
    });
  }

  /** The one-statement commit of plain appends; undefined (nothing written) when a run of the batch is not held under its epoch. */
  private async appendPlain(writes: readonly RunWrite[], plain: PlainAppends, now: number): Promise<CommitResult[] | undefined> {
    await this.db.ensureReady();
    const runner = this.db.runner;
    const notice = runner.journalNotice(plain.params[0]);
    if (plain.params[0].length === 1 && notice.payload === null) {
      // One run, no one listening to it: a plain statement (no rows back: not held, nothing written).
      const [runId] = plain.params[0];
      const [row] = await runner.write<{ base: string | number }>(APPEND_ONE, [
        runId,
        plain.params[1][0],
        plain.params[2][0],
        runner.nowParam(now),
        plain.entryParams[2],
        plain.entryParams[3],
        plain.entryParams[4],
      ]);
      if (!row) return undefined;
      const base = Number(row.base);
      return writes.map((write, i) => ({ ok: true, firstSeq: base + plain.offsets[i]! + 1, lastSeq: base + plain.offsets[i]! + write.entries.length }));
    }
    let rows: { runId: string; base: string | number }[];
    try {
      rows = await runner.write(APPEND_PLAIN_FN, [...plain.params, runner.nowParam(now), ...plain.entryParams, notice.channel, notice.payload]);
    } catch (error) {
      if (error instanceof pg.DatabaseError && error.code === NOT_HELD) return undefined;
      throw error;
    }
    const bases = new Map(rows.map((row) => [row.runId, Number(row.base)]));
    return writes.map((write, i) => {
      const base = bases.get(write.runId)!;
      const offset = plain.offsets[i]!;
      return { ok: true, firstSeq: base + offset + 1, lastSeq: base + offset + write.entries.length };
    });
  }
}

/**
 * The encoded output when `writes` are writes of one run under one epoch, plain appends ending in
 * `run.completed`, without blobs: what {@link COMPLETE_PLAIN_FN} commits in one statement (the row as
 * `projectEntry` makes it). The committer batches a step's result and the completion as two writes.
 */
function plainCompletion(writes: readonly RunWrite[]): string | undefined {
  // Most commits are step appends: one look at the batch's last entry settles them.
  if (writes.at(-1)!.entries.at(-1)?.kind !== "run.completed") return undefined;
  const { runId, epoch } = writes[0]!;
  if (writes.some((write) => write.runId !== runId || write.epoch !== epoch || write.entries.length === 0 || (write.blobs && write.blobs.length > 0))) {
    return undefined;
  }
  const entries = writes.flatMap((write) => write.entries);
  const last = entries.at(-1)!;
  if (last.kind !== "run.completed" || !entries.slice(0, -1).every(isPlainAppend)) return undefined;
  const output = projectEntry(last, 0)?.output;
  return typeof output === "string" ? output : undefined;
}

/** A batch of plain appends as {@link APPEND_PLAIN}'s parameters: run ids, epochs, entry counts; then the entries' columns. */
interface PlainAppends {
  params: [string[], number[], number[]];
  entryParams: unknown[];
  offsets: number[];
}

/**
 * The parameters of {@link APPEND_PLAIN} for `writes`, and each write's offset within its run's
 * entries; or undefined when the batch is not all plain appends (common/plan-write
 * `isPlainAppend`), or has an empty write, or writes one run under two epochs.
 */
function plainAppends(writes: readonly RunWrite[]): PlainAppends | undefined {
  const runs = new Map<string, { epoch: number; n: number }>();
  const offsets: number[] = [];
  const entryParams: unknown[][] = [[], [], [], [], []];
  for (const write of writes) {
    if (write.entries.length === 0 || !write.entries.every(isPlainAppend)) return undefined;
    let run = runs.get(write.runId);
    if (!run) runs.set(write.runId, (run = { epoch: write.epoch, n: 0 }));
    else if (run.epoch !== write.epoch) return undefined;
    offsets.push(run.n);
    for (const entry of write.entries) {
      run.n += 1;
      entryParams[0]!.push(write.runId);
      entryParams[1]!.push(run.n);
      entryParams[2]!.push(entry.kind);
      entryParams[3]!.push(entry.opKey);
      entryParams[4]!.push(entry.payload);
    }
  }
  const ids = [...runs.keys()];
  return { params: [ids, ids.map((id) => runs.get(id)!.epoch), ids.map((id) => runs.get(id)!.n)], entryParams, offsets };
}
