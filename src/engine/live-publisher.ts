import { LiveDeltas } from "../core/live-deltas.js";
import type { LiveDeltaStore, NewLiveDelta } from "../core/live-delta-store.js";
import type { NewEntry } from "../core/journal.js";

/** How long deltas of a streamed run wait to be written together (one write per interval, whatever the model's pace). */
export const LIVE_FLUSH_MS = 50;
/** How often a worker that is generating asks which runs other processes stream. */
export const LIVE_INTEREST_MS = 250;
/** How often an active publisher prunes records of steps silent for {@link LIVE_PRUNE_AGE_MS} (left by crashed workers). */
const PRUNE_EVERY_MS = 60_000;
const LIVE_PRUNE_AGE_MS = 10 * 60_000;

/** A step whose records this publisher wrote: the attempt, and whether its `full` record is current for the readers now streaming. */
interface Published {
  attempt: number;
  current: boolean;
}

/**
 * Carries a worker's live deltas (`step-progress`) to the run streams of servers in other
 * processes, through the store's {@link LiveDeltaStore} (see `core/live-delta-store.ts`).
 *
 * Costs nothing in the store for runs no other process streams: it keeps each running attempt's
 * output so far in memory (bounded, like the server's), and only while something is generating here
 * it asks the store every {@link LIVE_INTEREST_MS} which runs other processes stream. For those it
 * writes, every {@link LIVE_FLUSH_MS} at most: a `full` record of a step when a reader first wants it
 * (or at a new attempt), then `more` records with what came since; an `end` record once the step's
 * outcome is journaled. An attempt past the size bound stops streaming (its outcome still comes).
 */
export class LiveDeltaPublisher {
  /** The output so far of the step attempts running here. */
  private readonly live = new LiveDeltas();
  /** The runs other processes stream, as last read. */
  private streamed: ReadonlySet<string> = new Set();
  private readonly published = new Map<string, Map<string, Published>>();
  /** Records to write at the next flush (`more` pieces and `end`s; `full`s are made at the flush). */
  private pending: NewLiveDelta[] = [];
  private flushTimer: NodeJS.Timeout | undefined;
  private interestTimer: NodeJS.Timeout | undefined;
  private writing: Promise<void> | undefined;
  private lastPrune = 0;
  private closed = false;

  constructor(
    private readonly store: LiveDeltaStore,
    private readonly origin: string,
    private readonly clock: () => number,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** A progress piece of a running step attempt here. */
  progress(runId: string, opKey: string, attempt: number, data: unknown): void {
    if (this.closed) return;
    this.live.record(runId, { opKey, attempt, data });
    this.watch();
    if (!this.streamed.has(runId)) return;
    const sent = this.published.get(runId)?.get(opKey);
    if (!sent?.current || sent.attempt !== attempt) return this.scheduleFlush(); // its `full` record goes at the flush
    if (this.live.attemptOf(runId, opKey)?.overflow) return;
    const last = this.pending.at(-1);
    if (last && last.kind === "more" && last.runId === runId && last.opKey === opKey && last.attempt === attempt) (last.pieces as unknown[]).push(data);
    else this.pending.push({ runId, opKey, attempt, kind: "more", pieces: [data] });
    this.scheduleFlush();
  }

  /** Whether anything of `runId` is kept here (so its commits are worth looking at). */
  has(runId: string): boolean {
    return this.published.has(runId) || this.live.steps(runId).length > 0;
  }

  /** A commit of `runId` succeeded: steps whose outcome it journaled stop streaming, and their records go. */
  committed(runId: string, entries: readonly NewEntry[]): void {
    for (const entry of entries) {
      if (entry.opKey === null) continue;
      if (entry.kind === "step.completed" || (entry.kind === "step.failed" && (entry.data as { final?: boolean }).final)) this.stepEnded(runId, entry.opKey);
    }
  }

  /** This worker stopped executing `runId`; `finished` when no other worker will go on with it (it completed, failed or suspended). */
  runEnded(runId: string, finished: boolean): void {
    if (finished) for (const opKey of this.published.get(runId)?.keys() ?? []) this.stepEnded(runId, opKey);
    this.live.forgetRun(runId);
    this.published.delete(runId);
    this.pending = this.pending.filter((r) => r.runId !== runId || r.kind === "end");
  }

  /** Stops the timers and waits for a write in flight. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.flushTimer);
    clearTimeout(this.interestTimer);
    await this.writing;
  }

  private stepEnded(runId: string, opKey: string): void {
    this.live.forgetStep(runId, opKey);
    const steps = this.published.get(runId);
    const sent = steps?.get(opKey);
    this.pending = this.pending.filter((r) => r.runId !== runId || r.opKey !== opKey);
    if (!steps || !sent) return;
    steps.delete(opKey);
    if (steps.size === 0) this.published.delete(runId);
    this.pending.push({ runId, opKey, attempt: sent.attempt, kind: "end", pieces: [] });
    this.scheduleFlush();
  }

  /** Keeps {@link LiveDeltaPublisher.streamed} fresh while something is generating here. */
  private watch(): void {
    if (this.interestTimer || this.closed) return;
    const tick = async (): Promise<void> => {
      try {
        const now = this.clock();
        const streamed = new Set(await this.store.listStreamedRuns(this.origin, now));
        for (const [runId, steps] of this.published) if (!streamed.has(runId)) for (const step of steps.values()) step.current = false;
        this.streamed = streamed;
        if ([...streamed].some((runId) => this.live.steps(runId).length > 0)) this.scheduleFlush();
        if (now - this.lastPrune >= PRUNE_EVERY_MS) {
          this.lastPrune = now;
          await this.store.pruneLiveDeltas(now - LIVE_PRUNE_AGE_MS);
        }
      } catch (error) {
        this.onError(error);
      }
      if (this.closed) return;
      if (this.live.runIds().length === 0 && this.pending.length === 0) {
        // Nothing generating: stop asking; what was read goes stale, so forget it.
        this.interestTimer = undefined;
        this.streamed = new Set();
        return;
      }
      this.interestTimer = setTimeout(() => void tick(), LIVE_INTEREST_MS);
      this.interestTimer.unref();
    };
    this.interestTimer = setTimeout(() => void tick(), 0);
    this.interestTimer.unref();
  }

  private scheduleFlush(): void {
    if (this.flushTimer || this.closed) return;
    this.flushTimer = setTimeout(() => {
      this.flushTimer = undefined;
      void this.flush();
    }, LIVE_FLUSH_MS);
    this.flushTimer.unref();
  }

  private async flush(): Promise<void> {
    if (this.writing) {
      await this.writing;
      return this.scheduleFlush();
    }
    const records: NewLiveDelta[] = [];
    // Steps a reader newly wants (or a new attempt): their whole output so far, replacing queued pieces.
    for (const runId of this.streamed) {
      for (const opKey of this.live.steps(runId)) {
        const kept = this.live.attemptOf(runId, opKey)!;
        let steps = this.published.get(runId);
        const sent = steps?.get(opKey);
        if (sent?.current && sent.attempt === kept.attempt) continue;
        if (kept.overflow) continue;
        this.pending = this.pending.filter((r) => r.runId !== runId || r.opKey !== opKey || r.kind === "end");
        if (!steps) this.published.set(runId, (steps = new Map()));
        steps.set(opKey, { attempt: kept.attempt, current: true });
        records.push({ runId, opKey, attempt: kept.attempt, kind: "full", pieces: this.live.snapshot(runId, opKey).map((d) => d.data) });
      }
    }
    records.push(...this.pending);
    this.pending = [];
    if (records.length === 0) return;
    this.writing = this.store.writeLiveDeltas(this.origin, records, this.clock()).then(
      () => undefined,
      (error: unknown) => {
        // Readers may have missed pieces: write each step's whole output again (and the ends).
        this.pending.unshift(...records.filter((r) => r.kind === "end"));
        for (const record of records) {
          const sent = this.published.get(record.runId)?.get(record.opKey);
          if (sent) sent.current = false;
        }
        this.onError(error);
        this.scheduleFlush();
      },
    );
    await this.writing;
    this.writing = undefined;
  }
}
