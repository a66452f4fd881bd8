import type { LiveDeltaRecord, LiveDeltaStore, NewLiveDelta } from "../../core/live-delta-store.js";
import { liveDeltaRecord, type LiveDeltaRow } from "../common/live-delta-sql.js";
import { channelName, liveChannel } from "./postgres-config.js";
import type { PostgresConnection } from "./postgres-connection.js";
import { ADVERTISE_LIVE, PRUNE_LIVE, PRUNE_LIVE_LISTENERS, READ_LIVE, RETIRE_LIVE, STREAMED_RUNS, WRITE_LIVE } from "./postgres-live-deltas-queries.js";

/** The {@link LiveDeltaStore} part of {@link PostgresStore}: two UNLOGGED tables and a NOTIFY on the schema's live channel. */
export class PostgresLiveDeltas implements LiveDeltaStore {
  constructor(private readonly db: PostgresConnection) {}

  /** See {@link Store.advertiseLiveDeltas}. */
  async advertiseLiveDeltas(origin: string, runIds: readonly string[], expiresAt: number): Promise<void> {
    if (runIds.length > 0) await this.db.query(ADVERTISE_LIVE, [origin, runIds, expiresAt]);
  }

  /** See {@link Store.retireLiveDeltas}. */
  async retireLiveDeltas(origin: string, runIds?: readonly string[]): Promise<void> {
    await this.db.query(RETIRE_LIVE, [origin, runIds ?? null]);
  }

  /** See {@link Store.listStreamedRuns}. */
  async listStreamedRuns(origin: string, now: number): Promise<string[]> {
    return (await this.db.query<{ runId: string }>(STREAMED_RUNS, [origin, now])).map((row) => row.runId);
  }

  /**
   * See {@link Store.writeLiveDeltas}: one statement into UNLOGGED tables (no WAL), with a NOTIFY on
   * the schema's live channel. Only runs some server streams are ever written, so the NOTIFY's
   * commit lock is paid only by those.
   */
  async writeLiveDeltas(origin: string, records: readonly NewLiveDelta[], now: number): Promise<void> {
    if (records.length === 0) return;
    await this.db.ensureReady();
    await this.db.runner.write(WRITE_LIVE, writeLiveParams(origin, records, now, channelName(liveChannel(this.db.config.schema))));
  }

  /** See {@link Store.readLiveDeltas}. */
  async readLiveDeltas(runIds: readonly string[], afterId: number, origin: string, limit = 1000): Promise<LiveDeltaRecord[]> {
    if (runIds.length === 0) return [];
    return liveRecords(await this.db.query<LiveDeltaRow & Record<string, unknown>>(READ_LIVE, [afterId, origin, runIds, limit]));
  }

  /** See {@link Store.pruneLiveDeltas}. */
  async pruneLiveDeltas(before: number): Promise<number> {
    await this.db.query(PRUNE_LIVE_LISTENERS, [before]);
    return (await this.db.query(PRUNE_LIVE, [before])).length;
  }
}

/** {@link WRITE_LIVE}'s parameters. */
export function writeLiveParams(origin: string, records: readonly NewLiveDelta[], now: number, channel: string): unknown[] {
  const ended = records.filter((r) => r.kind === "end");
  return [
    ended.map((r) => r.runId),
    ended.map((r) => r.opKey),
    records.map((r) => r.runId),
    records.map((r) => r.opKey),
    records.map((r) => r.attempt),
    records.map((r) => r.kind),
    records.map((r) => JSON.stringify(r.pieces)),
    origin,
    now,
    channel,
  ];
}

/** Rows of {@link READ_LIVE} as records. */
export function liveRecords(rows: LiveDeltaRow[]): LiveDeltaRecord[] {
  return rows.map(liveDeltaRecord);
}
