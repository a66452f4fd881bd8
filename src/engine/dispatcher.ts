import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { ValidationError } from "../core/errors.js";
import type { OutboxMessage } from "../core/outbox.js";
import { decode, serializeError } from "../core/serialize.js";
import type { OutboxStore, Store } from "../core/store.js";
import { crashPoint } from "./crash-points.js";
import type { EngineLogger } from "./engine.js";
import type { Dispatcher, DispatcherOptions, OutboxDelivery } from "./outbox.js";
import { checkedMs, type OutboxRegistry } from "./outbox-registry.js";
import { postWebhook } from "./webhook.js";

/** What a dispatcher needs from its engine. */
export interface DispatcherHost {
  store: OutboxStore & Pick<Store, "onWake">;
  clock: () => number;
  logger: EngineLogger;
  registry: OutboxRegistry;
}

/** By default the lease on a claimed message outlasts the delivery timeout by this much. */
const LEASE_MARGIN_MS = 10_000;
const MAX_ERROR_CHARS = 2000;
const IDLE_WITHOUT_TOPICS_MS = 60_000;

/**
 * Delivers outbox messages at least once: claims due messages of the topics it has destinations for
 * (a lease per message, so other dispatchers leave them alone), calls the handlers and the webhook,
 * then records delivered, or failed with a retry time, or dead after the last attempt. A dispatcher
 * that dies mid-delivery leaves the message claimed until its lease expires; another then delivers it again.
 */
export class DispatcherImpl implements Dispatcher {
  readonly dispatcherId: string;
  private readonly concurrency: number;
  private readonly pollInterval: number;
  private readonly timeoutMs: number;
  private readonly leaseMs: number;
  private readonly inflight = new Map<string, AbortController>();
  private stopping = false;
  private wakeUp: (() => void) | null = null;
  private woken = false;
  private readonly loopDone: Promise<void>;
  private readonly unsubscribe: (() => void)[] = [];

  constructor(
    private readonly host: DispatcherHost,
    options: DispatcherOptions = {},
  ) {
    if (typeof options !== "object" || options === null) throw new ValidationError("startDispatcher: options must be an object.");
    this.concurrency = whole(options.concurrency ?? 8, 1, 10_000, "concurrency");
    this.pollInterval = whole(options.pollInterval ?? 250, 1, 60_000, "pollInterval");
    this.timeoutMs = checkedMs(options.timeout ?? "30s", "startDispatcher: timeout");
    if (this.timeoutMs < 1) throw new ValidationError("startDispatcher: timeout must be at least 1 ms.");
    this.leaseMs = options.leaseMs === undefined ? this.timeoutMs + LEASE_MARGIN_MS : checkedMs(options.leaseMs, "startDispatcher: leaseMs");
    if (this.leaseMs <= this.timeoutMs)
      throw new ValidationError(`startDispatcher: leaseMs (${this.leaseMs}) must be longer than timeout (${this.timeoutMs}).`);
    if (
      options.dispatcherId !== undefined &&
      (typeof options.dispatcherId !== "string" || options.dispatcherId.length === 0 || options.dispatcherId.length > 200)
    ) {
      throw new ValidationError("startDispatcher: dispatcherId must be a string of 1–200 characters.");
    }
    this.dispatcherId = options.dispatcherId ?? `dispatcher:${hostname()}:${process.pid}:${randomBytes(3).toString("hex")}`;
    this.unsubscribe.push(host.registry.onChange(() => this.kick()));
    if (host.store.onWake) this.unsubscribe.push(host.store.onWake(() => this.kick()));
    this.loopDone = this.loop();
  }

  get active(): number {
    return this.inflight.size;
  }

  /** Claim now rather than at the next poll. */
  kick(): void {
    this.woken = true;
    this.wakeUp?.();
  }

  async stop(options: { drain?: boolean } = {}): Promise<void> {
    this.stopping = true;
    for (const off of this.unsubscribe.splice(0)) off();
    this.kick();
    if (options.drain === false) for (const controller of this.inflight.values()) controller.abort(new Error("the dispatcher stopped"));
    await this.loopDone;
    while (this.inflight.size > 0) await this.idle(this.pollInterval);
  }

  private async loop(): Promise<void> {
    while (!this.stopping) {
      const free = this.concurrency - this.inflight.size;
      const topics = this.host.registry.topics();
      let full = false;
      if (free > 0 && topics.length > 0) {
        try {
          const claimed = await this.host.store.claimOutbox({
            owner: this.dispatcherId,
            topics,
            now: this.host.clock(),
            leaseMs: this.leaseMs,
            limit: free,
          });
          for (const message of claimed) void this.deliver(message);
          full = claimed.length === free;
        } catch (error) {
          this.host.logger.log("warn", "outbox claim failed; retrying at the next poll", { dispatcherId: this.dispatcherId, error: serializeError(error) });
        }
      }
      // With no destination there is nothing to claim: sleep until one is added (the registry kicks).
      if (!full && !this.stopping) await this.idle(topics.length === 0 ? IDLE_WITHOUT_TOPICS_MS : this.pollInterval);
    }
  }

  private idle(ms: number): Promise<void> {
    if (this.woken) {
      this.woken = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      const self = this;
      function done(): void {
        clearTimeout(timer);
        self.wakeUp = null;
        self.woken = false;
        resolve();
      }
      this.wakeUp = done;
    });
  }

  private async deliver(message: OutboxMessage): Promise<void> {
    const controller = new AbortController();
    this.inflight.set(message.messageId, controller);
    const timer = setTimeout(() => controller.abort(new Error(`delivery timed out after ${this.timeoutMs} ms`)), this.timeoutMs);
    try {
      crashPoint("before-deliver", message.opKey);
      let failure: unknown;
      try {
        await this.send(message, controller.signal);
      } catch (error) {
        failure = error;
      }
      clearTimeout(timer);
      if (this.stopping && controller.signal.aborted && failure !== undefined) return; // hard stop: the lease runs out, another attempt follows
      if (failure === undefined) crashPoint("after-deliver", message.opKey);
      await this.settle(message, failure);
    } catch (error) {
      this.host.logger.log("warn", "could not record an outbox delivery; it will be delivered again after its lease", {
        messageId: message.messageId,
        error: serializeError(error),
      });
    } finally {
      clearTimeout(timer);
      this.inflight.delete(message.messageId);
      this.kick();
    }
  }

  private async send(message: OutboxMessage, signal: AbortSignal): Promise<void> {
    const handlers = this.host.registry.handlersFor(message.topic);
    const webhook = this.host.registry.webhookFor(message.topic);
    if (handlers.length === 0 && !webhook) throw new Error(`no handler or webhook for topic "${message.topic}" any more`);
    const delivery: OutboxDelivery = {
      messageId: message.messageId,
      topic: message.topic,
      payload: decode(message.payload),
      runId: message.runId,
      opKey: message.opKey,
      attempt: message.attempts,
      emittedAt: new Date(message.createdAt),
      signal,
    };
    const aborted = new Promise<never>((_, reject) => {
      if (signal.aborted) reject(signal.reason);
      signal.addEventListener("abort", () => reject(signal.reason), { once: true });
    });
    aborted.catch(() => undefined);
    for (const handler of handlers) await Promise.race([Promise.resolve().then(() => handler({ ...delivery })), aborted]);
    if (webhook) await Promise.race([postWebhook(webhook, message, message.attempts, signal), aborted]);
  }

  private async settle(message: OutboxMessage, failure: unknown): Promise<void> {
    const now = this.host.clock();
    const base = { messageId: message.messageId, owner: this.dispatcherId, attempts: message.attempts };
    if (failure === undefined) {
      await this.host.store.settleOutbox({ ...base, outcome: "delivered" }, now);
      return;
    }
    const error = (failure instanceof Error ? failure.message : String(failure)).slice(0, MAX_ERROR_CHARS);
    const retryAt = this.host.registry.retryAt(message.attempts, now);
    const level = retryAt === null ? "error" : "warn";
    this.host.logger.log(level, retryAt === null ? "outbox message is dead after its last attempt" : "outbox delivery failed; it will be retried", {
      messageId: message.messageId,
      topic: message.topic,
      attempt: message.attempts,
      error,
    });
    await this.host.store.settleOutbox({ ...base, outcome: "failed", error, retryAt }, now);
  }
}

function whole(value: unknown, min: number, max: number, what: string): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max) {
    throw new ValidationError(`startDispatcher: ${what} must be a whole number from ${min} to ${max} (got ${String(value)}).`);
  }
  return value;
}
