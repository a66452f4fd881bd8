import { RunFinishedError, RunNotFoundError } from "../../core/errors.js";
import { isTerminal, successorOf, type RunRecord } from "../../core/run.js";
import type { InboxEvent, InboxStore, NewInboxEvent } from "../../core/store.js";
import type { MemoryWriter } from "./memory-write.js";

/** The {@link InboxStore} part of {@link MemoryStore}: events sent to runs, buffered until a run consumes them. */
export class MemoryInbox implements InboxStore {
  constructor(private readonly w: MemoryWriter) {}

  /** See {@link Store.sendEvent}. */
  async sendEvent(event: NewInboxEvent, now: number): Promise<{ duplicate: boolean; runId?: string }> {
    const t = this.w.t;
    return t.atomic(() => {
      const first = t.runs.get(event.runId);
      if (!first) throw new RunNotFoundError(event.runId);
      let run: RunRecord = first;
      // Along a continue-as-new chain to its last run: each run's event ids are duplicates too.
      for (;;) {
        if (t.findInbox(run.runId, event.eventId)) return { duplicate: true };
        const next: string | undefined = run.status === "completed" ? successorOf(run, t.journal.get(run.runId)?.at(-1)?.kind) : undefined;
        const found: RunRecord | undefined = next === undefined ? undefined : t.runs.get(next);
        if (!found) break;
        run = found;
      }
      if (isTerminal(run.status)) throw new RunFinishedError(run.runId, run.status, `send event "${event.type}"`);
      t.putBlobs(event.blobs, now);
      t.insertInbox({ runId: run.runId, type: event.type, eventId: event.eventId, payload: event.payload, consumedSeq: null, receivedAt: now });
      this.w.wake(run.runId, now);
      return run.runId === event.runId ? { duplicate: false } : { duplicate: false, runId: run.runId };
    });
  }

  /** See {@link Store.pendingEvents}. */
  async pendingEvents(runId: string, type: string, limit?: number): Promise<InboxEvent[]> {
    const pending = this.inboxOf(runId).filter((event) => event.type === type && event.consumedSeq === null);
    return limit === undefined ? pending : pending.slice(0, Math.max(0, limit));
  }

  /** See {@link Store.listInbox}. */
  async listInbox(runId: string): Promise<InboxEvent[]> {
    return this.inboxOf(runId);
  }

  private inboxOf(runId: string): InboxEvent[] {
    const ids = this.w.t.inboxByRun.get(runId) ?? [];
    return ids.flatMap((id) => {
      const row = this.w.t.inbox.get(id);
      return row ? [{ ...row }] : [];
    });
  }
}
