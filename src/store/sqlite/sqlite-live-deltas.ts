import type Database from "better-sqlite3";
import { ADVERTISE_LISTENER, RETIRE_LISTENER, RETIRE_LISTENERS, readLiveDeltasQuery } from "./sqlite-live-queries.js";
import type { LiveDeltaRecord, LiveDeltaStore, NewLiveDelta } from "../../core/live-delta-store.js";
import type { SqliteConnection } from "./sqlite-connection.js";
import { liveDeltaRecord, liveDeltaSql, type LiveDeltaRow } from "../common/live-delta-sql.js";

const sql = liveDeltaSql(() => "?");

/**
 * The live-delta statements of {@link SqliteStore} (see `core/live-delta-store.ts`): two small tables in the
 * database file, polled by readers. Deltas are ephemeral, so their writes do not wait for fsync
 * (`synchronous = NORMAL` for that transaction, which in WAL mode cannot corrupt the file; the next
 * journal commit makes them durable with it anyway).
 */
export class SqliteLiveDeltaStatements {
  private readonly advertise: Database.Statement;
  private readonly retireRun: Database.Statement;
  private readonly retireAll: Database.Statement;
  private readonly streamed: Database.Statement;
  private readonly deleteStep: Database.Statement;
  private readonly insert: Database.Statement;
  private readonly prune: Database.Statement;
  private readonly pruneListeners: Database.Statement;

  constructor(private readonly db: Database.Database) {
    this.advertise = db.prepare(ADVERTISE_LISTENER);
    this.retireRun = db.prepare(RETIRE_LISTENER);
    this.retireAll = db.prepare(RETIRE_LISTENERS);
    this.streamed = db.prepare(sql.streamed);
    this.deleteStep = db.prepare(sql.deleteStep);
    this.insert = db.prepare(sql.insert);
    this.prune = db.prepare(sql.prune);
    this.pruneListeners = db.prepare(sql.pruneListeners);
  }

  advertiseRuns(origin: string, runIds: readonly string[], expiresAt: number): void {
    if (runIds.length === 0) return;
    this.quickly(() => {
      for (const runId of runIds) this.advertise.run(origin, runId, expiresAt);
    });
  }

  retire(origin: string, runIds?: readonly string[]): void {
    this.quickly(() => {
      if (runIds === undefined) this.retireAll.run(origin);
      else for (const runId of runIds) this.retireRun.run(origin, runId);
    });
  }

  streamedRuns(origin: string, now: number): string[] {
    return (this.streamed.all(origin, now) as { runId: string }[]).map((row) => row.runId);
  }

  write(origin: string, records: readonly NewLiveDelta[], now: number): void {
    if (records.length === 0) return;
    this.quickly(() => {
      for (const record of records) {
        if (record.kind === "end") this.deleteStep.run(record.runId, record.opKey);
        this.insert.run(record.runId, record.opKey, record.attempt, record.kind, origin, JSON.stringify(record.pieces), now);
      }
    });
  }

  read(runIds: readonly string[], afterId: number, origin: string, limit: number): LiveDeltaRecord[] {
    if (runIds.length === 0) return [];
    const rows = this.db.prepare(readLiveDeltasQuery(runIds.length)).all(afterId, origin, ...runIds, limit) as LiveDeltaRow[];
    return rows.map(liveDeltaRecord);
  }

  pruneBefore(before: number): number {
    return this.quickly(() => {
      this.pruneListeners.run(before);
      return this.prune.run(before, before).changes;
    });
  }

  /** Runs `fn` in a transaction that does not wait for fsync (restoring the connection's setting after). */
  private quickly<T>(fn: () => T): T {
    const previous = String(this.db.pragma("synchronous", { simple: true }));
    const lower = previous === "2" || previous === "3"; // FULL or EXTRA
    if (lower) this.db.pragma("synchronous = NORMAL");
    try {
      return this.db.transaction(fn).immediate();
    } finally {
      if (lower) this.db.pragma(`synchronous = ${previous}`);
    }
  }
}

/** The {@link LiveDeltaStore} part of {@link SqliteStore} (polled by readers: no push notices). */
export class SqliteLiveDeltas implements LiveDeltaStore {
  private statements: SqliteLiveDeltaStatements | undefined;

  constructor(private readonly c: SqliteConnection) {}

  /** See {@link Store.advertiseLiveDeltas}. */
  async advertiseLiveDeltas(origin: string, runIds: readonly string[], expiresAt: number): Promise<void> {
    this.liveDeltas.advertiseRuns(origin, runIds, expiresAt);
  }

  /** See {@link Store.retireLiveDeltas}. */
  async retireLiveDeltas(origin: string, runIds?: readonly string[]): Promise<void> {
    this.liveDeltas.retire(origin, runIds);
  }

  /** See {@link Store.listStreamedRuns}. */
  async listStreamedRuns(origin: string, now: number): Promise<string[]> {
    return this.liveDeltas.streamedRuns(origin, now);
  }

  /** See {@link Store.writeLiveDeltas}. Does not wait for fsync: deltas are ephemeral. */
  async writeLiveDeltas(origin: string, records: readonly NewLiveDelta[], now: number): Promise<void> {
    this.liveDeltas.write(origin, records, now);
  }

  /** See {@link Store.readLiveDeltas}. */
  async readLiveDeltas(runIds: readonly string[], afterId: number, origin: string, limit = 1000): Promise<LiveDeltaRecord[]> {
    return this.liveDeltas.read(runIds, afterId, origin, limit);
  }

  /** See {@link Store.pruneLiveDeltas}. */
  async pruneLiveDeltas(before: number): Promise<number> {
    return this.liveDeltas.pruneBefore(before);
  }

  /** Live-delta statements, prepared on first use (reading `q` first checks the schema version). */
  private get liveDeltas(): SqliteLiveDeltaStatements {
    if (!this.statements && this.c.q) this.statements = new SqliteLiveDeltaStatements(this.c.db);
    return this.statements!;
  }
}
