import type { PayloadBlob } from "./blobs.js";

/** The inbox: events sent to a run, buffered until a wait consumes them (exactly once, by event id). Part of the {@link Store} port. */
export interface InboxStore {
  /**
   * Buffers an event in the run's inbox and wakes the run (suspended → `wakeAt = now`;
   * running/pending → `wakePending = true`). A duplicate `eventId` for the run is a no-op
   * (`duplicate: true`). Throws RunNotFoundError, or RunFinishedError for terminal runs.
   *
   * A run that continued as new (`run.continued`) passes the event on along its chain, in the same
   * transaction: it lands in the last run (`runId` in the answer names it), and an `eventId` any run
   * of the chain from `event.runId` on already holds is a duplicate. A continuation that commits
   * first moves the unconsumed events to the new run (so the two never race).
   */
  sendEvent(event: NewInboxEvent, now: number): Promise<{ duplicate: boolean; runId?: string }>;
  /** Unconsumed inbox events of one type for a run, oldest first. */
  pendingEvents(runId: string, type: string, limit?: number): Promise<InboxEvent[]>;
  /** All inbox events of a run (for inspection), oldest first. */
  listInbox(runId: string): Promise<InboxEvent[]>;
}

/** An event to deliver. */
export interface NewInboxEvent {
  runId: string;
  type: string;
  eventId: string;
  /** Encoded payload. */
  payload: string;
  /** Blobs the payload references, inserted (deduplicated) with the event, only if it is not a duplicate. */
  blobs?: readonly PayloadBlob[];
}
/** An event in a run's inbox. */
export interface InboxEvent {
  id: number;
  runId: string;
  type: string;
  eventId: string;
  payload: string;
  /** Seq of the entry that consumed it, or null while buffered. */
  consumedSeq: number | null;
  receivedAt: number;
}
