import type { JournalCompaction } from "../../core/compaction.js";
import type { QueueStat } from "../../core/flow-control.js";
import { RunNotFoundError } from "../../core/errors.js";
import type { RunRecord } from "../../core/run.js";
import type { CopiedEntry, ListRunsQuery, NewRun, RunCount, RunEntriesQuery, RunEntry, RunFilter, RunPage, RunStore } from "../../core/store.js";
import { decodeCursor, encodeCursor, pageLimit } from "../common/list-query.js";
import { insertBlobs } from "./postgres-blobs.js";
import type { PostgresConnection } from "./postgres-connection.js";
import { debounceRun, queueStats } from "./postgres-flow.js";
import { RUN_ENTRIES_SQL } from "./postgres-run-entries-queries.js";
import { runEntriesParams, toRunEntries } from "./postgres-run-entries.js";
import { toRun, type StateRow } from "./postgres-rows.js";
import { COUNT_RUNS, CREATE_PLAIN_FN, GET_RUN, GET_RUNS, countRunsQuery, listRunsQuery } from "./postgres-runs-queries.js";
import type { Tx } from "./postgres-tx.js";
import { runnableSoon, WriteSession } from "./postgres-write.js";
import { newRunEntries, newRunRecord } from "../common/run-state.js";

/** The {@link RunStore} part of {@link PostgresStore}: creating runs and reading their rows. */
export class PostgresRuns implements RunStore {
  constructor(private readonly db: PostgresConnection) {}

  /** See {@link Store.createRun}: a plain run ({@link createPlain}) in one round trip. */
  async createRun(run: NewRun, now: number): Promise<{ run: RunRecord; created: boolean }> {
    const record = (await this.createPlain([run], now))?.[0];
    if (record) return { run: record, created: true };
    return this.db.tx(now, async (tx) => {
      const session = new WriteSession(tx);
      const record = await session.createRun(run);
      if (record) {
        await insertBlobs(tx, run.blobs);
        await session.flush();
        return { run: record, created: true };
      }
      return { run: await mustGetRun(tx, run.runId), created: false };
    });
  }

  /** See {@link Store.createRuns}. */
  async createRuns(runs: readonly NewRun[], now: number): Promise<{ run: RunRecord; created: boolean }[]> {
    if (runs.length === 0) return [];
    const plain = await this.createPlain(runs, now);
    if (plain) {
      // The ids that were taken: read (or, if gone meanwhile, created) by the general path.
      const rest = runs.filter((_, i) => !plain[i]);
      const others = rest.length > 0 ? await this.createRunsLocked(rest, now) : [];
      let next = 0;
      return plain.map((record) => (record ? { run: record, created: true } : others[next++]!));
    }
    return this.createRunsLocked(runs, now);
  }

  /**
   * Creates runs without a queue, tags, deadline, delayed start or blobs (created pending, or
   * claimed with `claimFor`) with their first entries in one statement and one round trip
   * ({@link CREATE_PLAIN_FN}), stamped with the statement's time.
   * @returns for each run, its new row, or undefined when its id was taken; undefined (nothing
   *   written) when some run is not plain or an id repeats.
   * @throws ValidationError when a run's input is not an encoded payload (nothing is written).
   */
  private async createPlain(runs: readonly NewRun[], now: number): Promise<(RunRecord | undefined)[] | undefined> {
    if (!runs.every(isPlainRun) || new Set(runs.map((run) => run.runId)).size !== runs.length) return undefined;
    // Built at time 0 for their columns and to validate the inputs; the statement stamps the times.
    const shapes = runs.map((run) => ({ record: newRunRecord(run, 0), entries: newRunEntries(run, 0) }));
    await this.db.ensureReady();
    const runner = this.db.runner;
    const notice = runner.journalNotice(runs.map((run) => run.runId));
    const entries = shapes.flatMap((shape) => shape.entries);
    const column = <T>(pick: (record: RunRecord, run: NewRun) => T): T[] => shapes.map((shape, i) => pick(shape.record, runs[i]!));
    const rows = await runner.write<{ runId: string; at: string | number }>(CREATE_PLAIN_FN, [
      column((r) => r.runId),
      column((r) => r.workflow),
      column((r) => r.version),
      column((r) => r.status),
      column((r) => r.input),
      column((r) => r.parentRunId),
      column((r) => r.parentOpKey),
      column((r) => r.leaseOwner),
      column((_, run) => run.claimFor?.leaseMs ?? null),
      column((r) => r.leaseEpoch),
      column((r) => r.lastSeq),
      runner.nowParam(now),
      entries.map((entry) => entry.runId),
      entries.map((entry) => entry.seq),
      entries.map((entry) => entry.kind),
      entries.map((entry) => entry.payload),
      entries.map((entry) => entry.epoch),
      shapes.some((shape) => runnableSoon(shape.record, 0)) ? runner.wakeChannel : null,
      notice.channel,
      notice.payload,
    ]);
    const stamped = new Map(rows.map((row) => [row.runId, Number(row.at)]));
    return runs.map((run) => {
      const at = stamped.get(run.runId);
      return at === undefined ? undefined : newRunRecord(run, at);
    });
  }

  private async createRunsLocked(runs: readonly NewRun[], now: number): Promise<{ run: RunRecord; created: boolean }[]> {
    return this.db.tx(now, async (tx) => {
      const session = new WriteSession(tx);
      const records = await session.createRuns(runs);
      await insertBlobs(
        tx,
        runs.flatMap((run, i) => (records[i] ? (run.blobs ?? []) : [])),
      );
      await session.flush();
      const missing = runs.filter((_, i) => !records[i]).map((run) => run.runId);
      const existing = new Map<string, RunRecord>();
      if (missing.length > 0) for (const row of await tx.query<StateRow & { input: string }>(GET_RUNS, [missing])) existing.set(row.runId, toRun(row));
      return runs.map((run, i) => {
        const record = records[i];
        if (record) return { run: record, created: true };
        const found = existing.get(run.runId);
        if (!found) throw new RunNotFoundError(run.runId);
        return { run: found, created: false };
      });
    });
  }

  /** See {@link Store.createRunWithJournal}. */
  async createRunWithJournal(
    run: NewRun,
    entries: readonly CopiedEntry[],
    now: number,
    compaction?: JournalCompaction,
  ): Promise<{ run: RunRecord; created: boolean }> {
    return this.db.tx(now, async (tx) => {
      const session = new WriteSession(tx);
      const record = await session.createRunWithJournal(run, entries, compaction);
      if (record) {
        await insertBlobs(tx, run.blobs);
        await session.flush();
        return { run: record, created: true };
      }
      return { run: await mustGetRun(tx, run.runId), created: false };
    });
  }

  /** See {@link Store.listRunEntries}. */
  async listRunEntries(query: RunEntriesQuery): Promise<RunEntry[]> {
    const params = runEntriesParams(query);
    return toRunEntries(await this.db.query(RUN_ENTRIES_SQL, params));
  }

  /** See {@link Store.countRuns}. */
  async countRuns(filter?: RunFilter): Promise<RunCount[]> {
    const filtered = filter === undefined ? undefined : countRunsQuery(filter, [...new Set(filter.status ?? [])]);
    return (await (filtered ? this.db.query<RunCount>(filtered.text, filtered.values) : this.db.query<RunCount>(COUNT_RUNS))).map((row) => ({
      workflow: row.workflow,
      status: row.status,
      count: Number(row.count),
    }));
  }

  /** See {@link Store.debounceRun}. */
  async debounceRun(run: NewRun, key: string, startAt: number, now: number): Promise<{ run: RunRecord; created: boolean }> {
    return this.db.tx(now, (tx) => debounceRun(tx, run, key, startAt, tx.now));
  }

  /** See {@link Store.queueStats}. In database-clock mode `now` is ignored. */
  async queueStats(now: number): Promise<QueueStat[]> {
    return this.db.tx(now, (tx) => queueStats(tx, tx.now));
  }

  /** See {@link Store.getRun}. */
  async getRun(runId: string): Promise<RunRecord | undefined> {
    const [row] = await this.db.query<StateRow & { input: string }>(GET_RUN, [runId]);
    return row && toRun(row);
  }

  /** See {@link Store.listRuns}. */
  async listRuns(query: ListRunsQuery): Promise<RunPage> {
    const limit = pageLimit(query.limit);
    const cursor = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
    const { text, values } = listRunsQuery(query, [...new Set(query.status ?? [])], cursor, limit + 1);
    const rows = (await this.db.query<StateRow & { input: string }>(text, values)).map(toRun);
    const runs = rows.slice(0, limit);
    const last = runs[runs.length - 1];
    return rows.length > limit && last ? { runs, nextCursor: encodeCursor(last) } : { runs };
  }
}

/** A run {@link PostgresRuns.createPlain} creates: no queue, tags, deadline, delayed start or blobs. */
function isPlainRun(run: NewRun): boolean {
  return !run.flow && run.tags === undefined && run.deadlineAt === undefined && run.startAt === undefined && (run.blobs?.length ?? 0) === 0;
}

/** The run's row, read in `tx`. @throws RunNotFoundError when there is none. */
export async function mustGetRun(tx: Tx, runId: string): Promise<RunRecord> {
  const [row] = await tx.query<StateRow & { input: string }>(GET_RUN, [runId]);
  if (!row) throw new RunNotFoundError(runId);
  return toRun(row);
}
