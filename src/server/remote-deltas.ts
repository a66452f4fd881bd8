import { LiveDeltas, type Delta } from "../core/live-deltas.js";
import type { LiveDeltaRecord } from "../core/live-delta-store.js";
import type { LiveDeltaStore } from "../core/live-delta-store.js";

/** How often the store is read for new records when it does not push (SQLite); also the pace of reads after a push. */
export const REMOTE_POLL_MS = 50;
/** With push (PostgreSQL NOTIFY), the store is still read this often, in case a notice was lost. */
const PUSHED_POLL_MS = 1000;
/** How long an advertisement lasts, and how often it is renewed. */
const ADVERTISE_TTL_MS = 30_000;
const ADVERTISE_EVERY_MS = 10_000;
const READ_LIMIT = 1000;

interface Followed {
  /** The last record id read for this run (ids only grow; per run, since one writer writes a run's records in order). */
  cursor: number;
}

/**
 * The live deltas of runs streamed here that workers of **other** processes generate, read from the
 * store's `LiveDeltaStore` (see `core/live-delta-store.ts`). While a run is followed it is
 * advertised, so the worker generating it writes its deltas; they are read every
 * {@link REMOTE_POLL_MS} (SQLite) or when the store pushes a notice (PostgreSQL), kept coalesced per
 * step attempt (a stream that opens later catches up from them) and handed to `deliver`.
 */
export class RemoteDeltas {
  private readonly followed = new Map<string, Followed>();
  /** What the running attempts of followed runs streamed so far. */
  readonly live = new LiveDeltas();
  private timer: NodeJS.Timeout | undefined;
  private advertising: NodeJS.Timeout | undefined;
  private stopPush: (() => void) | undefined;
  private reading = false;
  private again = false;
  private stopped = false;

  constructor(
    private readonly store: LiveDeltaStore,
    private readonly origin: string,
    private readonly deliver: (runId: string, delta: Delta) => void,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** Starts following `runId` (advertising it and reading its records). */
  follow(runId: string): void {
    if (this.stopped || this.followed.has(runId)) return;
    this.followed.set(runId, { cursor: 0 });
    void this.advertise([runId]);
    if (!this.advertising) {
      this.advertising = setInterval(() => void this.advertise([...this.followed.keys()]), ADVERTISE_EVERY_MS);
      this.advertising.unref();
    }
    if (!this.stopPush && this.store.onLiveDeltas) this.stopPush = this.store.onLiveDeltas(() => this.read());
    this.read();
  }

  /** Stops following `runId` and withdraws its advertisement. */
  unfollow(runId: string): void {
    if (!this.followed.delete(runId)) return;
    this.live.forgetRun(runId);
    this.store.retireLiveDeltas(this.origin, [runId]).catch(this.onError);
    if (this.followed.size > 0) return;
    clearInterval(this.advertising);
    this.advertising = undefined;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.stopPush?.();
    this.stopPush = undefined;
  }

  /** Stops following every run. */
  stop(): void {
    for (const runId of [...this.followed.keys()]) this.unfollow(runId);
    this.stopped = true;
  }

  private async advertise(runIds: string[]): Promise<void> {
    try {
      await this.store.advertiseLiveDeltas(this.origin, runIds, Date.now() + ADVERTISE_TTL_MS);
    } catch (error) {
      this.onError(error);
    }
  }

  /** Reads new records of every followed run now (or right after the read in progress), then schedules the next read. */
  private read(): void {
    if (this.reading) {
      this.again = true;
      return;
    }
    this.reading = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    void this.readAll().finally(() => {
      this.reading = false;
      if (this.followed.size === 0 || this.stopped) return;
      if (this.again) {
        this.again = false;
        return this.read();
      }
      this.timer = setTimeout(() => this.read(), this.stopPush ? PUSHED_POLL_MS : REMOTE_POLL_MS);
      this.timer.unref();
    });
  }

  private async readAll(): Promise<void> {
    for (const [runId, state] of this.followed) {
      try {
        for (;;) {
          const records = await this.store.readLiveDeltas([runId], state.cursor, this.origin, READ_LIMIT);
          if (this.followed.get(runId) !== state) break;
          for (const record of records) this.apply(record);
          if (records.length > 0) state.cursor = records.at(-1)!.id;
          if (records.length < READ_LIMIT) break;
        }
      } catch (error) {
        this.onError(error);
      }
    }
  }

  private apply(record: LiveDeltaRecord): void {
    const { runId, opKey, attempt } = record;
    if (record.kind === "end") return this.live.forgetStep(runId, opKey);
    if (record.kind === "full") {
      this.live.replace(runId, opKey, attempt, record.pieces);
      // The attempt's whole output so far: streams replace what they showed of it.
      for (const delta of this.live.snapshot(runId, opKey)) this.deliver(runId, delta);
      return;
    }
    for (const data of record.pieces) {
      this.live.record(runId, { opKey, attempt, data });
      this.deliver(runId, { opKey, attempt, data });
    }
  }
}
