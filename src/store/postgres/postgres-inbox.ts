import { RunFinishedError, RunNotFoundError } from "../../core/errors.js";
import { isTerminal } from "../../core/run.js";
import type { InboxEvent, InboxStore, NewInboxEvent } from "../../core/store.js";
import { insertBlobs } from "./postgres-blobs.js";
import type { PostgresConnection } from "./postgres-connection.js";
import { FIND_INBOX, INSERT_INBOX, LIST_INBOX, PENDING_EVENTS } from "./postgres-inbox-queries.js";
import type { InboxRow } from "./postgres-rows.js";
import { WriteSession } from "./postgres-write.js";

/** The {@link InboxStore} part of {@link PostgresStore}: events sent to runs, buffered until a run consumes them. */
export class PostgresInbox implements InboxStore {
  constructor(private readonly db: PostgresConnection) {}

  /** See {@link Store.sendEvent}. */
  async sendEvent(event: NewInboxEvent, now: number): Promise<{ duplicate: boolean }> {
    return this.db.tx(now, async (tx) => {
      const session = new WriteSession(tx);
      await session.lock([event.runId]);
      const run = session.state(event.runId);
      if (!run) throw new RunNotFoundError(event.runId);
      if ((await tx.query(FIND_INBOX, [event.runId, event.eventId])).length > 0) return { duplicate: true };
      if (isTerminal(run.status)) throw new RunFinishedError(run.runId, run.status, `send event "${event.type}"`);
      await insertBlobs(tx, event.blobs);
      await tx.query(INSERT_INBOX, [event.runId, event.type, event.eventId, event.payload, tx.now]);
      await session.wake(event.runId);
      await session.flush();
      return { duplicate: false };
    });
  }

  /** See {@link Store.pendingEvents}. */
  async pendingEvents(runId: string, type: string, limit?: number): Promise<InboxEvent[]> {
    return this.db.query<InboxRow>(PENDING_EVENTS, [runId, type, limit === undefined ? null : Math.max(0, limit)]);
  }

  /** See {@link Store.listInbox}. */
  async listInbox(runId: string): Promise<InboxEvent[]> {
    return this.db.query<InboxRow>(LIST_INBOX, [runId]);
  }
}
