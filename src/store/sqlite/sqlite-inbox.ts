import { RunFinishedError, RunNotFoundError } from "../../core/errors.js";
import { isTerminal, successorOf } from "../../core/run.js";
import type { InboxEvent, InboxStore, NewInboxEvent } from "../../core/store.js";
import type { RunState } from "../common/run-state.js";
import type { SqliteConnection } from "./sqlite-connection.js";
import { ENTRY_KIND } from "./sqlite-inbox-queries.js";
import type { InboxRow } from "./sqlite-rows.js";
import type { SqliteWriter } from "./sqlite-write.js";

/** The {@link InboxStore} part of {@link SqliteStore}: events sent to runs, buffered until a run consumes them. */
export class SqliteInbox implements InboxStore {
  constructor(
    private readonly c: SqliteConnection,
    private readonly w: SqliteWriter,
  ) {}

  /** See {@link Store.sendEvent}. */
  async sendEvent(event: NewInboxEvent, now: number): Promise<{ duplicate: boolean; runId?: string }> {
    return this.c.immediate(() => {
      let run = this.w.loadState(event.runId);
      if (!run) throw new RunNotFoundError(event.runId);
      // Along a continue-as-new chain to its last run: each run's event ids are duplicates too.
      for (;;) {
        if (this.c.q.findInbox.get(run.runId, event.eventId)) return { duplicate: true };
        const next = this.successor(run);
        if (!next) break;
        run = next;
      }
      if (isTerminal(run.status)) throw new RunFinishedError(run.runId, run.status, `send event "${event.type}"`);
      if (event.blobs) this.w.insertBlobs(event.blobs, now);
      this.c.q.insertInbox.run(run.runId, event.type, event.eventId, event.payload, now);
      this.w.wake(run, now);
      return run.runId === event.runId ? { duplicate: false } : { duplicate: false, runId: run.runId };
    });
  }

  /** The run that continues `run`, when it continued as new (one indexed read of its last entry). */
  private successor(run: RunState): RunState | undefined {
    if (run.status !== "completed") return undefined;
    const last = this.c.q.prepared(ENTRY_KIND).get(run.runId, run.lastSeq) as { kind: string } | undefined;
    const next = successorOf(run, last?.kind);
    return next === undefined ? undefined : this.w.loadState(next);
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
