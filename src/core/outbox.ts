import { z } from "zod";
import { ValidationError } from "./errors.js";

/** Where an outbox message is in its life: waiting to be delivered (or being delivered), delivered, or given up on. */
export type OutboxStatus = "pending" | "delivered" | "dead";

/** Every {@link OutboxStatus}, in display order. */
export const OUTBOX_STATUSES: readonly OutboxStatus[] = ["pending", "delivered", "dead"];

/**
 * A message written by `ctx.emit` in the same transaction as its journal entry, and delivered
 * at least once by a dispatcher. Times are epoch ms.
 */
export interface OutboxMessage {
  /** The store's insertion order (increasing); the order messages are listed in. */
  id: number;
  /** Stable id for consumers to deduplicate by: `<runId>:<opKey>`. Every delivery of a message carries it. */
  messageId: string;
  runId: string;
  opKey: string;
  /** Seq of the `outbox.emitted` entry that wrote it. */
  seq: number;
  topic: string;
  /** Encoded payload (core/serialize `encode`). */
  payload: string;
  status: OutboxStatus;
  /** Delivery attempts started (a claim counts as one, so a dispatcher that crashes mid-delivery uses one up). */
  attempts: number;
  /**
   * When it may next be claimed: its retry time after a failure, or, while a dispatcher holds it,
   * when that dispatcher's lease expires. Meaningless once delivered or dead.
   */
  nextAttemptAt: number;
  /** The last delivery error, or null. */
  lastError: string | null;
  /** The dispatcher holding it while it is being delivered. */
  leaseOwner: string | null;
  createdAt: number;
  deliveredAt: number | null;
}

/** A message to insert (the side effect of an `outbox.emitted` entry). */
export type NewOutboxMessage = Pick<OutboxMessage, "messageId" | "runId" | "opKey" | "seq" | "topic" | "payload" | "createdAt">;

/** What a dispatcher claims: due pending messages of these topics, oldest due first. */
export interface OutboxClaimRequest {
  /** The dispatcher's id, recorded as `leaseOwner`. */
  owner: string;
  /** Only messages of these topics (the ones it can deliver). Empty → nothing is claimed. */
  topics: readonly string[];
  now: number;
  /** How long the claim holds: the message is claimable again after `now + leaseMs`. */
  leaseMs: number;
  limit: number;
}

/**
 * The result of one delivery attempt, applied only if the message is still pending and held by
 * `owner` at `attempts` (so a dispatcher whose lease expired and was taken over cannot overwrite the new holder's result).
 */
export type OutboxSettlement =
  | { messageId: string; owner: string; attempts: number; outcome: "delivered" }
  /** `retryAt` null: the message is dead (no more attempts). */
  | { messageId: string; owner: string; attempts: number; outcome: "failed"; error: string; retryAt: number | null };

/** Filters of `Store.listOutbox`. */
export interface ListOutboxQuery {
  /** Default: every status. */
  status?: readonly OutboxStatus[];
  topic?: string;
  runId?: string;
  /** Only messages with a larger id (the previous page's last id). */
  afterId?: number;
  /** Default 50, at most 1000. */
  limit?: number;
}

/** Zod schema of `engine.listOutbox`'s query (the library's form: `status` is an array). */
export const listOutboxLibraryQuerySchema = z
  .object({
    status: z.array(z.enum(OUTBOX_STATUSES as [OutboxStatus, ...OutboxStatus[]], { message: `use ${OUTBOX_STATUSES.join(", ")}` })).optional(),
    topic: z.string().min(1).optional(),
    runId: z.string().min(1).optional(),
    afterId: z.number().int().nonnegative().optional(),
    limit: z.number().int().min(1).max(1000).optional(),
  })
  .strict();

const TOPIC = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

/**
 * Checks an outbox topic: 1–128 characters, letters, digits and `. _ : -`, starting with a letter
 * or digit (so it can name an op and a webhook route). Throws ValidationError otherwise.
 */
export function checkTopic(topic: unknown, where: string): string {
  if (typeof topic !== "string" || !TOPIC.test(topic)) {
    throw new ValidationError(
      `${where}: topic ${JSON.stringify(topic)} is not valid; use 1–128 letters, digits, ".", "_", ":" or "-", starting with a letter or digit (e.g. "order.created").`,
    );
  }
  return topic;
}

/** The stable id of the message emitted by op `opKey` of run `runId`. */
export function outboxMessageId(runId: string, opKey: string): string {
  return `${runId}:${opKey}`;
}

/**
 * The outbox list filters as the HTTP API (`GET /outbox`) and the CLI take them; `status` is a
 * comma-separated list (default `pending`), or `all`.
 */
export const listOutboxQuerySchema = z
  .object({
    status: z
      .string()
      .default("pending")
      .transform((text, ctx) => {
        if (text === "all") return [...OUTBOX_STATUSES];
        const parts = text.split(",").map((part) => part.trim());
        const bad = parts.find((part) => !(OUTBOX_STATUSES as readonly string[]).includes(part));
        if (bad !== undefined) {
          ctx.addIssue({ code: "custom", message: `unknown status "${bad}"; use ${OUTBOX_STATUSES.join(", ")} (comma-separated) or all` });
          return z.NEVER;
        }
        return parts as OutboxStatus[];
      }),
    topic: z.string().min(1).max(128).optional(),
    runId: z.string().min(1).max(512).optional(),
    afterId: z.coerce.number().int().min(0).optional(),
    limit: z.coerce.number().int().min(1).max(1000).default(50),
  })
  .strict();

/** An outbox message as the HTTP API shows it: payload decoded, times as ISO 8601. */
export const apiOutboxMessageSchema = z.object({
  id: z.number().int(),
  messageId: z.string(),
  runId: z.string(),
  opKey: z.string(),
  seq: z.number().int(),
  topic: z.string(),
  payload: z.unknown(),
  status: z.enum(["pending", "delivered", "dead"]),
  attempts: z.number().int(),
  nextAttemptAt: z.iso.datetime().nullable(),
  lastError: z.string().nullable(),
  leaseOwner: z.string().nullable(),
  createdAt: z.iso.datetime(),
  deliveredAt: z.iso.datetime().nullable(),
});

/** `GET /outbox` response. */
export const outboxListSchema = z.object({ messages: z.array(apiOutboxMessageSchema) });

/** `apiOutboxMessageSchema`'s type. */
export type ApiOutboxMessage = z.output<typeof apiOutboxMessageSchema>;
