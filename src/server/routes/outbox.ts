import type { Hono } from "hono";
import { listOutboxQuerySchema, type OutboxMessage } from "../../core/outbox.js";
import { decode } from "../../core/serialize.js";
import type { Engine } from "../../engine/engine.js";
import { json, parse, queryOf } from "../http.js";

/** Registers `GET /outbox` (admin scope under token auth: messages of every namespace). */
export function registerOutboxRoutes(app: Hono, engine: Engine): void {
  app.get("/outbox", async (c) => {
    const query = parse(listOutboxQuerySchema, queryOf(c), "query");
    const messages = await engine.listOutbox(query);
    return json(c, { messages: messages.map(outboxView) });
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
