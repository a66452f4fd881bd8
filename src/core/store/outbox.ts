import type { ListOutboxQuery, OutboxClaimRequest, OutboxMessage, OutboxSettlement } from "../outbox.js";

/** The outbox: messages written by `ctx.emit` (inserted by the commit of their `outbox.emitted` entry), claimed and settled by dispatchers. Part of the {@link Store} port. */
export interface OutboxStore {
  /**
   * Claims up to `limit` pending messages of `request.topics` whose `nextAttemptAt <= now`, oldest due
   * first: each gets `attempts + 1`, `leaseOwner = owner` and `nextAttemptAt = now + leaseMs`, so no
   * other dispatcher claims it before that lease expires. Concurrent claimers never get the same message.
   */
  claimOutbox(request: OutboxClaimRequest): Promise<OutboxMessage[]>;
  /**
   * Records a delivery attempt's result (delivered; or failed, to retry at `retryAt` or dead) if the
   * message is still pending, held by `owner` at `attempts`. Returns false, changing nothing, otherwise.
   */
  settleOutbox(settlement: OutboxSettlement, now: number): Promise<boolean>;
  /** Messages in id order, filtered. */
  listOutbox(query: ListOutboxQuery): Promise<OutboxMessage[]>;
  getOutboxMessage(messageId: string): Promise<OutboxMessage | undefined>;
  /**
   * Re-queues a dead message: pending, `attempts = 0`, due at `now`, last error kept. Returns the row
   * and `applied: false`, unchanged, when it is not dead. Throws OutboxMessageNotFoundError for unknown ids.
   */
  retryOutbox(messageId: string, now: number): Promise<{ message: OutboxMessage; applied: boolean }>;
}
