import type { ListOutboxQuery, OutboxClaimRequest, OutboxMessage, OutboxSettlement } from "../../core/outbox.js";
import type { OutboxStore } from "../../core/store.js";
import type { SqliteConnection } from "./sqlite-connection.js";

/** The {@link OutboxStore} part of {@link SqliteStore}: messages committed with journal entries, delivered at least once. */
export class SqliteOutbox implements OutboxStore {
  constructor(private readonly c: SqliteConnection) {}

  /** See {@link Store.claimOutbox}. */
  async claimOutbox(request: OutboxClaimRequest): Promise<OutboxMessage[]> {
    if (request.topics.length === 0 || !this.c.outbox.anyDue(request.now)) return [];
    return this.c.immediate(() => this.c.outbox.claim(request));
  }

  /** See {@link Store.settleOutbox}. */
  async settleOutbox(settlement: OutboxSettlement, now: number): Promise<boolean> {
    return this.c.outbox.settle(settlement, now);
  }

  /** See {@link Store.listOutbox}. */
  async listOutbox(query: ListOutboxQuery): Promise<OutboxMessage[]> {
    return this.c.outbox.list(query);
  }

  /** See {@link Store.getOutboxMessage}. */
  async getOutboxMessage(messageId: string): Promise<OutboxMessage | undefined> {
    return this.c.outbox.find(messageId);
  }

  /** See {@link Store.retryOutbox}. */
  async retryOutbox(messageId: string, now: number): Promise<{ message: OutboxMessage; applied: boolean }> {
    return this.c.immediate(() => this.c.outbox.requeue(messageId, now));
  }
}
