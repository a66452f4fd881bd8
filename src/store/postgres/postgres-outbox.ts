import { OutboxMessageNotFoundError } from "../../core/errors.js";
import type { ListOutboxQuery, OutboxClaimRequest, OutboxMessage, OutboxSettlement } from "../../core/outbox.js";
import type { OutboxStore } from "../../core/store.js";
import type { PostgresConnection } from "./postgres-connection.js";
import { CLAIM_OUTBOX, GET_OUTBOX, RETRY_OUTBOX, claimOutboxParams, listOutboxQuery, settleOutboxParams } from "./postgres-outbox-queries.js";

/** The {@link OutboxStore} part of {@link PostgresStore}: messages committed with journal entries, delivered at least once. */
export class PostgresOutbox implements OutboxStore {
  constructor(private readonly db: PostgresConnection) {}

  /** See {@link Store.claimOutbox}. In database-clock mode `now` is ignored. */
  async claimOutbox(request: OutboxClaimRequest): Promise<OutboxMessage[]> {
    if (request.topics.length === 0) return [];
    const rows = await this.db.query<OutboxMessage>(CLAIM_OUTBOX, claimOutboxParams(request, this.db.runner.nowParam(request.now)));
    return rows.sort((a, b) => a.id - b.id);
  }

  /** See {@link Store.settleOutbox}. In database-clock mode `now` is ignored. */
  async settleOutbox(settlement: OutboxSettlement, now: number): Promise<boolean> {
    const { statement, params } = settleOutboxParams(settlement, this.db.runner.nowParam(now));
    return (await this.db.query(statement, params)).length === 1;
  }

  /** See {@link Store.listOutbox}. */
  async listOutbox(query: ListOutboxQuery): Promise<OutboxMessage[]> {
    const list = listOutboxQuery(query);
    return list ? this.db.query<OutboxMessage>(list.text, list.params) : [];
  }

  /** See {@link Store.getOutboxMessage}. */
  async getOutboxMessage(messageId: string): Promise<OutboxMessage | undefined> {
    return (await this.db.query<OutboxMessage>(GET_OUTBOX, [messageId]))[0];
  }

  /** See {@link Store.retryOutbox}. In database-clock mode `now` is ignored. */
  async retryOutbox(messageId: string, now: number): Promise<{ message: OutboxMessage; applied: boolean }> {
    return this.db.tx(now, async (tx) => {
      const applied = (await tx.query(RETRY_OUTBOX, [this.db.runner.nowParam(now), messageId])).length === 1;
      const [message] = await tx.query<OutboxMessage>(GET_OUTBOX, [messageId]);
      if (!message) throw new OutboxMessageNotFoundError(messageId);
      if (applied) tx.wake();
      return { message, applied };
    });
  }
}
