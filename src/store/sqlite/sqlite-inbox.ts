import { RunFinishedError, RunNotFoundError } from "../../core/errors.js";
import { isTerminal } from "../../core/run.js";
import type { InboxEvent, InboxStore, NewInboxEvent } from "../../core/store.js";
import type { SqliteConnection } from "./sqlite-connection.js";
import type { InboxRow } from "./sqlite-rows.js";
import type { SqliteWriter } from "./sqlite-write.js";

/** The {@link InboxStore} part of {@link SqliteStore}: events sent to runs, buffered until a run consumes them. */
export class SqliteInbox implements InboxStore {
  constructor(
    private readonly c: SqliteConnection,
    private readonly w: SqliteWriter,
  ) {}

  /** See {@link Store.sendEvent}. */
  async sendEvent(event: NewInboxEvent, now: number): Promise<{ duplicate: boolean }> {
    return this.c.immediate(() => {
      const run = this.w.loadState(event.runId);
      if (!run) throw new RunNotFoundError(event.runId);
      if (this.c.q.findInbox.get(event.runId, event.eventId)) return { duplicate: true };
      if (isTerminal(run.status)) throw new RunFinishedError(run.runId, run.status, `send event "${event.type}"`);
      if (event.blobs) this.w.insertBlobs(event.blobs, now);
      this.c.q.insertInbox.run(event.runId, event.type, event.eventId, event.payload, now);
      this.w.wake(run, now);
      return { duplicate: false };
    });
  }

  /** See {@link Store.pendingEvents}. */
  async pendingEvents(runId: string, type: string, limit?: number): Promise<InboxEvent[]> {
    return this.c.q.pendingEvents.all(runId, type, limit === undefined ? -1 : Math.max(0, limit)) as InboxRow[];
  }

  /** See {@link Store.listInbox}. */
  async listInbox(runId: string): Promise<InboxEvent[]> {
    return this.c.q.listInbox.all(runId) as InboxRow[];
  }
}
