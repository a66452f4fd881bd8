import type { Duration } from "../core/duration.js";

/**
 * One delivery of an outbox message to a handler. A message may be delivered more than once
 * (at least once): deduplicate by {@link OutboxDelivery.messageId}, which every delivery of it carries.
 */
export interface OutboxDelivery<P = unknown> {
  /** `<runId>:<opKey>`, stable across deliveries and processes. */
  messageId: string;
  topic: string;
  /** The payload given to `ctx.emit` (decoded from the journal). */
  payload: P;
  runId: string;
  opKey: string;
  /** 1 for the first attempt. */
  attempt: number;
  /** When the message was emitted. */
  emittedAt: Date;
  /** Aborted when the delivery timeout passes or the dispatcher stops hard. */
  signal: AbortSignal;
}

/**
 * Delivers one message. Resolve when the message is handled; throw (or reject) to have it retried
 * with back-off. Handlers must be idempotent by `messageId`.
 */
export type OutboxHandler<P = unknown> = (delivery: OutboxDelivery<P>) => Promise<void> | void;

/**
 * An HTTP endpoint that receives a topic's messages: `POST <url>` with a JSON body
 * `{ messageId, topic, runId, opKey, payload, emittedAt, attempt }` and headers `cairn-message-id`,
 * `cairn-topic`, `cairn-attempt`, and, with a `secret`, `cairn-signature: t=<unix seconds>,sha256=<hex HMAC-SHA256 of "<t>." + the body>` (check it with `verifyWebhookSignature`).
 * Any 2xx answer means delivered; anything else (or a network error, or the timeout) is retried.
 */
export interface OutboxWebhook {
  url: string;
  /** Signs each body with HMAC-SHA256 so the receiver can check it came from this engine. */
  secret?: string;
  /** Extra headers (e.g. an Authorization for the receiver). */
  headers?: Record<string, string>;
}

/** Back-off between delivery attempts: `initial * factor^(attempt-1)`, at most `max`. */
export interface OutboxBackoff {
  /** Default 1 s. */
  initial?: Duration;
  /** Default 10 min. */
  max?: Duration;
  /** Default 2. */
  factor?: number;
}

/**
 * Outbox delivery settings (`createEngine({ outbox })`).
 * @example
 * const engine = await createEngine({
 *   workflows: [checkout],
 *   outbox: {
 *     handlers: { "order.paid": async (m) => mailer.receipt(m.payload, { dedupeKey: m.messageId }) },
 *     webhooks: { "order.shipped": { url: "https://hooks.example.com/cairn", secret: process.env.HOOK_SECRET } },
 *     maxAttempts: 8,
 *   },
 * });
 */
export interface OutboxOptions {
  /** In-process handlers by topic (add more with `engine.onMessage`). */
  handlers?: Record<string, OutboxHandler<any>>;
  /** HTTP webhooks by topic. A topic may have a handler and a webhook: a delivery succeeds when both do. */
  webhooks?: Record<string, OutboxWebhook>;
  /** Attempts before a message is marked dead (it stays listed; `cairn outbox retry` re-queues it). Default 10. */
  maxAttempts?: number;
  backoff?: OutboxBackoff;
}

/** Options of `engine.startDispatcher` (and of the dispatcher `startWorker` starts). */
export interface DispatcherOptions {
  /** Messages delivered at once. Default 8. */
  concurrency?: number;
  /** Idle poll interval, behind push wake-ups (PostgreSQL LISTEN/NOTIFY). Default 250 ms. */
  pollInterval?: number;
  /**
   * How long one delivery may take before it is abandoned and retried. Default 30 s. It is shorter than
   * the claim's lease (`leaseMs`), so no other dispatcher delivers the message while this one still may.
   */
  timeout?: Duration;
  /**
   * How long a claim holds a message: if this dispatcher dies, another delivers the message again after
   * this long. Must exceed `timeout`. Default `timeout` + 10 s.
   */
  leaseMs?: Duration;
  /** Default `dispatcher:${hostname}:${pid}:${random}`. */
  dispatcherId?: string;
}

/** A running outbox dispatcher. */
export interface Dispatcher {
  readonly dispatcherId: string;
  /** Messages being delivered now. */
  readonly active: number;
  /**
   * Stops claiming and waits for the deliveries in flight to finish and be recorded. With
   * `drain: false` they are aborted instead (their `signal` fires) and not recorded: their messages
   * are delivered again once their leases expire.
   */
  stop(options?: { drain?: boolean }): Promise<void>;
}
