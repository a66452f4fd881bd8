import { randomUUID } from "node:crypto";
import { ADVERTISE, ANNOUNCE, LISTENED_RUNS, PURGE, RETIRE, RETIRE_ALL } from "./postgres-journal-notices-queries.js";
import { parseJournalPayload } from "./postgres-tx.js";
import type { WakeListener } from "./postgres-wake.js";

/** How often a listening store renews its rows in `journal_listeners`. */
export const ADVERTISE_MS = 10_000;
/** How long a row stays current without renewal (a listener that died stops costing writers after this). */
export const LISTENER_TTL_MS = 30_000;
/** How often a writing store re-reads which runs are listened to (besides the push when that set changes). */
export const INTEREST_REFRESH_MS = 5_000;
/** Payload of the wake-channel NOTIFY sent when a store's listened runs change, so writers re-read at once. */
export const LISTENERS_CHANGED = "journal-listeners";

type Query = (statement: { name: string; text: string }, values?: readonly unknown[]) => Promise<Record<string, unknown>[]>;

/**
 * Journal notices of one schema, both sides, per run.
 *
 * NOTIFY takes a database-wide lock as its transaction commits, which serializes the commits that
 * carry one, so a NOTIFY on every step commit would be paid on the hot path. Instead listeners
 * advertise the runs they listen to: while a store has {@link JournalNotices.subscribe} subscribers
 * it LISTENs on the journal channel and keeps one row per subscribed run in `journal_listeners`
 * current (renewed every {@link ADVERTISE_MS}, expiring after {@link LISTENER_TTL_MS}), and
 * announces each change of its set on the wake channel. Writers read the set of listened runs
 * every {@link INTEREST_REFRESH_MS} and at once on that announcement; a commit sends a notice only
 * when it appends entries of a listened run, naming only those runs, so commits of other runs pay
 * nothing. A notice missed meanwhile (a writer that has not seen the row yet) costs latency only:
 * readers keep polling the journal, the source of truth.
 */
export class JournalNotices {
  private readonly id = randomUUID();
  /** Listener side: subscribers by run id. */
  private readonly subscribers = new Map<string, Set<() => void>>();
  private unlisten: (() => void) | undefined;
  private advertising: NodeJS.Timeout | undefined;
  /** The runs whose rows this store wrote and has not removed. */
  private readonly advertised = new Set<string>();
  /** A sync of the rows with the subscribed runs is running; {@link JournalNotices.dirty} asks for another pass. */
  private syncing: Promise<void> | undefined;
  private dirty = false;
  private renew = false;
  private purged = false;
  /** The writer side's last reading: the runs some listener's row is current for. */
  private listenedRuns: ReadonlySet<string> = new Set();
  private refreshing: NodeJS.Timeout | undefined;
  private stopRefreshPush: (() => void) | undefined;
  private reading = false;
  private closed = false;

  constructor(
    private readonly query: Query,
    /** The journal channel's listener (its own connection). */
    private readonly journal: WakeListener,
    /** The wake channel's listener, for the announcements of changed listened runs. */
    private readonly wakes: WakeListener,
    /** The wake channel's name, unquoted (for pg_notify). */
    private readonly wakeChannelName: string,
    private readonly onError: (error: Error) => void,
  ) {}

  /**
   * Writer side: which of a committing transaction's runs to name in a journal notice (the ones
   * listened to; none means no notice). The first call starts keeping the answer fresh (a timer,
   * and the wake channel's announcements).
   */
  listened(runIds: ReadonlySet<string>): string[] {
    if (!this.refreshing && !this.closed) {
      this.refreshing = setInterval(() => void this.refresh(), INTEREST_REFRESH_MS);
      this.refreshing.unref();
      this.stopRefreshPush = this.wakes.subscribe((payload) => {
        // After a reconnection (no payload) an announcement may have been missed.
        if (payload === LISTENERS_CHANGED || payload === undefined) void this.refresh();
      });
      void this.refresh();
    }
    if (this.listenedRuns.size === 0) return [];
    return [...runIds].filter((runId) => this.listenedRuns.has(runId));
  }

  /** Listener side: see `Store.onJournal`. */
  subscribe(runId: string, listener: () => void): () => void {
    if (this.closed) return () => undefined;
    const entry = (): void => listener();
    this.unlisten ??= this.journal.subscribe((payload) => this.fire(parseJournalPayload(payload)));
    let set = this.subscribers.get(runId);
    if (!set) {
      this.subscribers.set(runId, (set = new Set()));
      this.schedule();
    }
    set.add(entry);
    if (!this.advertising) {
      this.advertising = setInterval(() => this.schedule(true), ADVERTISE_MS);
      this.advertising.unref();
    }
    let subscribed = true;
    return () => {
      if (!subscribed) return;
      subscribed = false;
      const current = this.subscribers.get(runId);
      current?.delete(entry);
      if (current?.size !== 0) return;
      this.subscribers.delete(runId);
      this.schedule();
      if (this.subscribers.size > 0) return;
      this.unlisten?.();
      this.unlisten = undefined;
      if (this.advertising) clearInterval(this.advertising);
      this.advertising = undefined;
    };
  }

  /** Resolves once every run subscribed to is listened for and advertised; for tests. */
  async listening(): Promise<void> {
    while (!this.closed && [...this.subscribers.keys()].some((runId) => !this.advertised.has(runId))) {
      if (!this.syncing) this.schedule();
      await this.syncing;
      if ([...this.subscribers.keys()].some((runId) => !this.advertised.has(runId))) await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** Stops both sides; removes this store's rows. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.refreshing) clearInterval(this.refreshing);
    if (this.advertising) clearInterval(this.advertising);
    this.advertising = undefined;
    this.stopRefreshPush?.();
    this.subscribers.clear();
    this.unlisten = undefined;
    await this.journal.close(); // first: a sync waiting for the LISTEN stops waiting
    await this.syncing;
    if (this.advertised.size > 0) {
      this.advertised.clear();
      await this.query(RETIRE_ALL, [this.id]).catch(() => undefined);
    }
  }

  private async refresh(): Promise<void> {
    if (this.reading || this.closed) return;
    this.reading = true;
    try {
      const rows = await this.query(LISTENED_RUNS);
      this.listenedRuns = new Set(rows.map((row) => String(row.runId)));
    } catch (error) {
      // Keep the last answer: a lost notice costs only latency, a needless one only its lock.
      this.onError(error as Error);
    } finally {
      this.reading = false;
    }
  }

  /** Brings this store's rows in line with its subscribed runs (renewing them all when `renew`), one pass at a time. */
  private schedule(renew = false): void {
    if (this.closed) return;
    this.dirty = true;
    this.renew ||= renew;
    this.syncing ??= this.sync().finally(() => (this.syncing = undefined));
  }

  private async sync(): Promise<void> {
    while (this.dirty && !this.closed) {
      this.dirty = false;
      const renew = this.renew;
      this.renew = false;
      const wanted = [...this.subscribers.keys()];
      const added = wanted.filter((runId) => !this.advertised.has(runId));
      const removed = [...this.advertised].filter((runId) => !this.subscribers.has(runId));
      try {
        if (added.length > 0) {
          // The LISTEN first, so no notice sent for a run once its row is seen is lost.
          await this.journal.listening();
          if (this.closed) return;
        }
        const write = renew ? wanted : added;
        if (write.length > 0) {
          await this.query(ADVERTISE, [this.id, write, LISTENER_TTL_MS]);
          for (const runId of write) this.advertised.add(runId);
        }
        if (removed.length > 0) {
          await this.query(RETIRE, [this.id, removed]);
          for (const runId of removed) this.advertised.delete(runId);
        }
        if (added.length > 0 || removed.length > 0) await this.query(ANNOUNCE, [this.wakeChannelName, LISTENERS_CHANGED]);
        // Rows of listeners that died without removing theirs (they cost nothing once expired).
        if (renew || (added.length > 0 && !this.purged)) {
          await this.query(PURGE, [LISTENER_TTL_MS]);
          this.purged = true;
        }
      } catch (error) {
        // Tried again at the next renewal.
        this.onError(error as Error);
      }
    }
  }

  /** Calls the subscribers of these runs (of every run when undefined: too many to name, or a reconnection). */
  private fire(runIds: string[] | undefined): void {
    const sets = runIds === undefined ? [...this.subscribers.values()] : runIds.flatMap((runId) => this.subscribers.get(runId) ?? []);
    for (const set of sets) {
      for (const listener of [...set]) {
        try {
          listener();
        } catch (error) {
          this.onError(error as Error);
        }
      }
    }
  }
}
