import { OutboxMessageNotFoundError } from "../../core/errors.js";
import type { ListOutboxQuery, NewOutboxMessage, OutboxClaimRequest, OutboxMessage, OutboxSettlement } from "../../core/outbox.js";
import { pageLimit } from "../common/list-query.js";
import type { OutboxStore } from "../../core/store.js";
import type { MemoryTables } from "./memory-tables.js";

/** The {@link OutboxStore} part of {@link MemoryStore}: the same rules as the SQL stores' statements, over {@link MemoryTables}. */
export class MemoryOutbox implements OutboxStore {
  constructor(private readonly t: MemoryTables) {}

  /** Inserts a message emitted by a commit (inside the commit's `atomic`). */
  insert(m: NewOutboxMessage): void {
    this.t.insertOutbox({ ...m, status: "pending", attempts: 0, nextAttemptAt: m.createdAt, lastError: null, leaseOwner: null, deliveredAt: null });
  }

  /** See {@link Store.claimOutbox}. */
  async claimOutbox(request: OutboxClaimRequest): Promise<OutboxMessage[]> {
    if (request.topics.length === 0) return [];
    const topics = new Set(request.topics);
    const due = [...this.t.outbox.values()]
      .filter((m) => m.status === "pending" && m.nextAttemptAt <= request.now && topics.has(m.topic))
      .sort((a, b) => a.nextAttemptAt - b.nextAttemptAt || a.id - b.id)
      .slice(0, request.limit);
    const claimed = due.map((m) => ({ ...m, attempts: m.attempts + 1, leaseOwner: request.owner, nextAttemptAt: request.now + request.leaseMs }));
    for (const m of claimed) this.t.putOutbox(m);
    return claimed.sort((a, b) => a.id - b.id).map((m) => ({ ...m }));
  }

  /** See {@link Store.settleOutbox}. */
  async settleOutbox(s: OutboxSettlement, now: number): Promise<boolean> {
    const m = this.t.outbox.get(s.messageId);
    if (!m || m.status !== "pending" || m.leaseOwner !== s.owner || m.attempts !== s.attempts) return false;
    if (s.outcome === "delivered") this.t.putOutbox({ ...m, status: "delivered", deliveredAt: now, leaseOwner: null });
    else this.t.putOutbox({ ...m, status: s.retryAt === null ? "dead" : "pending", nextAttemptAt: s.retryAt ?? now, lastError: s.error, leaseOwner: null });
    return true;
  }

  /** See {@link Store.listOutbox}. */
  async listOutbox(query: ListOutboxQuery): Promise<OutboxMessage[]> {
    const limit = pageLimit(query.limit);
    const out: OutboxMessage[] = [];
    for (const m of [...this.t.outbox.values()].sort((a, b) => a.id - b.id)) {
      if (out.length >= limit) break;
      if (query.status !== undefined && !query.status.includes(m.status)) continue;
      if (query.topic !== undefined && m.topic !== query.topic) continue;
      if (query.runId !== undefined && m.runId !== query.runId) continue;
      if (query.afterId !== undefined && m.id <= query.afterId) continue;
      out.push({ ...m });
    }
    return out;
  }

  /** See {@link Store.getOutboxMessage}. */
  async getOutboxMessage(messageId: string): Promise<OutboxMessage | undefined> {
    const m = this.t.outbox.get(messageId);
    return m && { ...m };
  }

  /** See {@link Store.retryOutbox}. */
  async retryOutbox(messageId: string, now: number): Promise<{ message: OutboxMessage; applied: boolean }> {
    const m = this.t.outbox.get(messageId);
    if (!m) throw new OutboxMessageNotFoundError(messageId);
    if (m.status !== "dead") return { message: { ...m }, applied: false };
    const next: OutboxMessage = { ...m, status: "pending", attempts: 0, nextAttemptAt: now, leaseOwner: null };
    this.t.putOutbox(next);
    return { message: { ...next }, applied: true };
  }
}
