import { randomUUID } from "node:crypto";
import type { JournalListener } from "../../core/store.js";
import { DB_NOW } from "./postgres-queries.js";
import { parseJournalPayload } from "./postgres-tx.js";
import type { WakeListener } from "./postgres-wake.js";

/** How often a listening store renews its row in `journal_listeners`. */
export const ADVERTISE_MS = 10_000;
/** How long a row stays current without renewal (a listener that died stops costing writers after this). */
export const LISTENER_TTL_MS = 30_000;
/** How often a writing store re-reads whether anyone listens (besides the push when a listener appears). */
export const INTEREST_REFRESH_MS = 5_000;
/** Payload of the wake-channel NOTIFY sent when a listener appears, so writers re-read at once. */
export const LISTENERS_CHANGED = "journal-listeners";

const ANY_LISTENER = {
  name: "cairn_any_journal_listener",
  text: `SELECT EXISTS (SELECT 1 FROM journal_listeners WHERE expires_at > ${DB_NOW}) AS yes`,
};
const ADVERTISE = {
  name: "cairn_advertise_journal_listener",
  text: `INSERT INTO journal_listeners (listener_id, expires_at) VALUES ($1, ${DB_NOW} + $2::bigint)
   ON CONFLICT (listener_id) DO UPDATE SET expires_at = EXCLUDED.expires_at`,
};
const RETIRE = { name: "cairn_retire_journal_listener", text: "DELETE FROM journal_listeners WHERE listener_id = $1" };
const PURGE = { name: "cairn_purge_journal_listeners", text: `DELETE FROM journal_listeners WHERE expires_at < ${DB_NOW} - $1::bigint` };
/** pg_notify takes the channel's name unquoted. */
const ANNOUNCE = { name: "cairn_announce_journal_listener", text: "SELECT pg_notify($1, $2)" };

type Query = (statement: { name: string; text: string }, values?: readonly unknown[]) => Promise<Record<string, unknown>[]>;

/**
 * Journal notices of one schema, both sides.
 *
 * NOTIFY takes a database-wide lock as its transaction commits, so a NOTIFY on every step commit
 * would be paid on the hot path even when no stream is open. Instead, listeners advertise: while a
 * store has {@link JournalNotices.subscribe} subscribers it LISTENs on the journal channel and keeps a
 * row in `journal_listeners` current (renewed every {@link ADVERTISE_MS}, expiring after
 * {@link LISTENER_TTL_MS}), announcing a new row on the wake channel. Writers read whether any row
 * is current every {@link INTEREST_REFRESH_MS} and at once on that announcement, and send journal
 * notices only while one is. A notice missed meanwhile (a writer that has not seen the row yet)
 * costs latency only: readers keep polling the journal, the source of truth.
 */
export class JournalNotices {
  private readonly id = randomUUID();
  private readonly listeners = new Set<JournalListener>();
  private unlisten: (() => void) | undefined;
  private advertising: NodeJS.Timeout | undefined;
  /** The writer side's last reading: some listener is current. */
  private interested = false;
  private refreshing: NodeJS.Timeout | undefined;
  private stopRefreshPush: (() => void) | undefined;
  private reading = false;
  private closed = false;
  /** This store's row was written since it began listening. */
  private advertised = false;
  private waiters: (() => void)[] = [];

  constructor(
    private readonly query: Query,
    /** The journal channel's listener (its own connection). */
    private readonly journal: WakeListener,
    /** The wake channel's listener, for the announcement of a new listener. */
    private readonly wakes: WakeListener,
    /** The wake channel's name, unquoted (for pg_notify). */
    private readonly wakeChannelName: string,
    private readonly onError: (error: Error) => void,
  ) {}

  /**
   * Writer side: whether to send a journal notice with the commit being made. The first call starts
   * keeping the answer fresh (a timer, and the wake channel's announcements).
   */
  wanted(): boolean {
    if (!this.refreshing && !this.closed) {
      this.refreshing = setInterval(() => void this.refresh(), INTEREST_REFRESH_MS);
      this.refreshing.unref();
      this.stopRefreshPush = this.wakes.subscribe((payload) => {
        // After a reconnection (no payload) an announcement may have been missed.
        if (payload === LISTENERS_CHANGED || payload === undefined) void this.refresh();
      });
      void this.refresh();
    }
    return this.interested;
  }

  /** Listener side: see `Store.onJournal`. */
  subscribe(listener: JournalListener): () => void {
    const entry: JournalListener = (runIds) => listener(runIds);
    this.listeners.add(entry);
    if (!this.unlisten) {
      this.unlisten = this.journal.subscribe((payload) => this.fire(parseJournalPayload(payload)));
      void this.advertise(true);
    }
    return () => {
      if (!this.listeners.delete(entry) || this.listeners.size > 0) return;
      this.unlisten?.();
      this.unlisten = undefined;
      void this.retire();
    };
  }

  /** Resolves once notices are listened for and advertised (after the first subscription); for tests. */
  async listening(): Promise<void> {
    if (this.advertised || this.closed || !this.unlisten) return;
    await new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  /** Stops both sides; removes this store's row. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.refreshing) clearInterval(this.refreshing);
    this.stopRefreshPush?.();
    this.listeners.clear();
    this.unlisten = undefined;
    for (const resolve of this.waiters.splice(0)) resolve();
    await this.journal.close();
    await this.retire();
  }

  private async refresh(): Promise<void> {
    if (this.reading || this.closed) return;
    this.reading = true;
    try {
      const [row] = await this.query(ANY_LISTENER);
      this.interested = row?.yes === true;
    } catch (error) {
      // Keep the last answer: a lost notice costs only latency, a needless one only its lock.
      this.onError(error as Error);
    } finally {
      this.reading = false;
    }
  }

  /** Writes this store's row (after the LISTEN is in effect, so no notice sent for it is lost); the first time, announces it. */
  private async advertise(first: boolean): Promise<void> {
    if (!this.unlisten || this.closed) return;
    try {
      if (first) await this.journal.listening();
      if (!this.unlisten) return;
      await this.query(ADVERTISE, [this.id, LISTENER_TTL_MS]);
      this.advertised = true;
      if (first) {
        await this.query(ANNOUNCE, [this.wakeChannelName, LISTENERS_CHANGED]);
        await this.query(PURGE, [LISTENER_TTL_MS]);
      }
      for (const resolve of this.waiters.splice(0)) resolve();
    } catch (error) {
      this.onError(error as Error);
    }
    if (first && this.unlisten !== undefined && !this.advertising) {
      this.advertising = setInterval(() => void this.advertise(false), ADVERTISE_MS);
      this.advertising.unref();
    }
  }

  private async retire(): Promise<void> {
    if (this.advertising) clearInterval(this.advertising);
    this.advertising = undefined;
    if (!this.advertised) return;
    this.advertised = false;
    await this.query(RETIRE, [this.id]).catch(() => undefined);
  }

  private fire(runIds: string[] | undefined): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(runIds);
      } catch (error) {
        this.onError(error as Error);
      }
    }
  }
}
