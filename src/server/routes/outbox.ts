import type { Hono } from "hono";
import { z } from "zod";
import { audit } from "../auth/audit.js";
import { listOutboxQuerySchema, type OutboxMessage } from "../../core/outbox.js";
import { decode } from "../../core/serialize.js";
import type { Engine } from "../../engine/engine.js";
import type { AuditStore } from "../../core/store.js";
import { json, parse, queryOf } from "../http.js";

/** Path parameter of `POST /outbox/:id/retry`: a message id (`<runId>:<opKey>`). */
export const outboxMessageParam = z.object({ id: z.string().min(1).max(1000) });

/**
 * Registers `GET /outbox` and `POST /outbox/:id/retry` (admin scope under token auth: messages of
 * every namespace). A retry re-queues a dead message and is audited; `applied: false` when it was not dead.
 */
/** `store`: the audit log, where re-queued messages are recorded. */
export function registerOutboxRoutes(app: Hono, engine: Engine, store: Pick<AuditStore, "appendAudit">): void {
  app.get("/outbox", async (c) => {
    const query = parse(listOutboxQuerySchema, queryOf(c), "query");
    const messages = await engine.listOutbox(query);
    return json(c, { messages: messages.map(outboxView) });
  });
  app.post("/outbox/:id/retry", async (c) => {
    const { id } = parse(outboxMessageParam, { id: c.req.param("id") }, "path");
    const { message, applied } = await engine.retryOutboxMessage(id);
    if (applied) await audit(c, store, "outbox.retry", id, { topic: message.topic, runId: message.runId });
    return json(c, { message: outboxView(message), applied });
  });
}

/** The wire form of a message (see `apiOutboxMessageSchema`). */
export function outboxView(m: OutboxMessage) {
  return {
    ...m,
    payload: decode(m.payload),
    nextAttemptAt: m.status === "pending" ? new Date(m.nextAttemptAt) : null,
    createdAt: new Date(m.createdAt),
    deliveredAt: m.deliveredAt === null ? null : new Date(m.deliveredAt),
  };
}
