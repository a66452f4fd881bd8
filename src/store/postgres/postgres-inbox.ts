import { RunFinishedError, RunNotFoundError } from "../../core/errors.js";
import { isTerminal, successorOf } from "../../core/run.js";
import type { InboxEvent, InboxStore, NewInboxEvent } from "../../core/store.js";
import { insertBlobs } from "./postgres-blobs.js";
import type { PostgresConnection } from "./postgres-connection.js";
import type { RunState } from "../common/run-state.js";
import { ENTRY_KIND, FIND_INBOX, INSERT_INBOX, LIST_INBOX, PENDING_EVENTS } from "./postgres-inbox-queries.js";
import type { InboxRow } from "./postgres-rows.js";
import type { Tx } from "./postgres-tx.js";
import { WriteSession } from "./postgres-write.js";

/** The {@link InboxStore} part of {@link PostgresStore}: events sent to runs, buffered until a run consumes them. */
export class PostgresInbox implements InboxStore {
  constructor(private readonly db: PostgresConnection) {}

  /** See {@link Store.sendEvent}. */
  async sendEvent(event: NewInboxEvent, now: number): Promise<{ duplicate: boolean; runId?: string }> {
    return this.db.tx(now, async (tx) => {
      const session = new WriteSession(tx);
      await session.lock([event.runId]);
      let run = session.state(event.runId);
      if (!run) throw new RunNotFoundError(event.runId);
      // Along a continue-as-new chain to its last run, each locked in turn (a continuation that holds
      // the lock commits first): each run's event ids are duplicates too.
      for (;;) {
        if ((await tx.query(FIND_INBOX, [run.runId, event.eventId])).length > 0) return { duplicate: true };
        const next = await successor(tx, session, run);
        if (!next) break;
        run = next;
      }
      if (isTerminal(run.status)) throw new RunFinishedError(run.runId, run.status, `send event "${event.type}"`);
      await insertBlobs(tx, event.blobs);
      await tx.query(INSERT_INBOX, [run.runId, event.type, event.eventId, event.payload, tx.now]);
      await session.wake(run.runId);
      await session.flush();
      return run.runId === event.runId ? { duplicate: false } : { duplicate: false, runId: run.runId };
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

/** The run that continues `run` (locked), when it continued as new (one indexed read of its last entry). */
async function successor(tx: Tx, session: WriteSession, run: RunState): Promise<RunState | undefined> {
  if (run.status !== "completed") return undefined;
  const [last] = await tx.query<{ kind: string }>(ENTRY_KIND, [run.runId, run.lastSeq]);
  const next = successorOf(run, last?.kind);
  if (next === undefined) return undefined;
  await session.lock([next]);
  return session.state(next);
}
