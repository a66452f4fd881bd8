import type Database from "better-sqlite3";
import { OutboxMessageNotFoundError } from "../../core/errors.js";
import type { ListOutboxQuery, NewOutboxMessage, OutboxClaimRequest, OutboxMessage, OutboxSettlement } from "../../core/outbox.js";
import { pageLimit } from "../common/list-query.js";
import { ANY_DUE, DELIVER, FAIL, GET_MESSAGE, INSERT_MESSAGE, REQUEUE, claimOutboxQuery, listOutboxQuery } from "./sqlite-outbox-queries.js";

/**
 * The outbox statements of a {@link SqliteStore}. Claims are one conditional UPDATE … RETURNING inside the
 * store's BEGIN IMMEDIATE transaction, so dispatchers in several processes sharing the file never
 * claim one message twice while its lease holds.
 */
export class SqliteOutboxStatements {
  private readonly insert: Database.Statement;
  private readonly get: Database.Statement;
  private readonly deliver: Database.Statement;
  private readonly fail: Database.Statement;
  private readonly retry: Database.Statement;
  private readonly due: Database.Statement;
  private readonly claims = new Map<number, Database.Statement>();

  constructor(private readonly db: Database.Database) {
    this.insert = db.prepare(INSERT_MESSAGE);
    this.due = db.prepare(ANY_DUE);
    this.get = db.prepare(GET_MESSAGE);
    this.deliver = db.prepare(DELIVER);
    this.fail = db.prepare(FAIL);
    this.retry = db.prepare(REQUEUE);
  }

  /** Inserts a message emitted by a commit (inside the commit's transaction). */
  insertMessage(m: NewOutboxMessage): void {
    this.insert.run(m.messageId, m.runId, m.opKey, m.seq, m.topic, m.payload, m.createdAt, m.createdAt);
  }

  /** True when some message may be claimable: read without the write lock, so idle polls do not take it. */
  anyDue(now: number): boolean {
    return this.due.get(now) !== undefined;
  }

  /** See Store.claimOutbox; call inside a write transaction. */
  claim(request: OutboxClaimRequest): OutboxMessage[] {
    if (request.topics.length === 0 || request.limit < 1) return [];
    let statement = this.claims.get(request.topics.length);
    if (!statement) {
      statement = this.db.prepare(claimOutboxQuery(request.topics.length));
      this.claims.set(request.topics.length, statement);
    }
    const rows = statement.all(request.owner, request.now + request.leaseMs, request.now, ...request.topics, request.limit) as OutboxMessage[];
    return rows.sort((a, b) => a.id - b.id);
  }

  /** See Store.settleOutbox. */
  settle(s: OutboxSettlement, now: number): boolean {
    if (s.outcome === "delivered") return this.deliver.run(now, s.messageId, s.owner, s.attempts).changes === 1;
    return this.fail.run(s.retryAt, s.retryAt, now, s.error, s.messageId, s.owner, s.attempts).changes === 1;
  }

  /** See Store.listOutbox. */
  list(query: ListOutboxQuery): OutboxMessage[] {
    const where: string[] = [];
    const params: unknown[] = [];
    if (query.status !== undefined) {
      if (query.status.length === 0) return [];
      where.push(`status IN (${query.status.map(() => "?").join(", ")})`);
      params.push(...query.status);
    }
    const add = (condition: string, value: unknown): void => {
      where.push(condition);
      params.push(value);
    };
    if (query.topic !== undefined) add("topic = ?", query.topic);
    if (query.runId !== undefined) add("run_id = ?", query.runId);
    if (query.afterId !== undefined) add("id > ?", query.afterId);
    return this.db.prepare(listOutboxQuery(where)).all(...params, pageLimit(query.limit)) as OutboxMessage[];
  }

  /** See Store.getOutboxMessage. */
  find(messageId: string): OutboxMessage | undefined {
    return this.get.get(messageId) as OutboxMessage | undefined;
  }

  /** See Store.retryOutbox; call inside a write transaction. */
  requeue(messageId: string, now: number): { message: OutboxMessage; applied: boolean } {
    const applied = this.retry.run(now, messageId).changes === 1;
    const message = this.find(messageId);
    if (!message) throw new OutboxMessageNotFoundError(messageId);
    return { message, applied };
  }
}
