import { z } from "zod";
import { toMs } from "../core/duration.js";
import { ValidationError } from "../core/errors.js";
import { checkTopic } from "../core/outbox.js";
import type { OutboxHandler, OutboxOptions, OutboxWebhook } from "./outbox.js";

/** Outbox settings with defaults applied. */
export interface OutboxSettings {
  maxAttempts: number;
  initialMs: number;
  maxMs: number;
  factor: number;
}

/** A duration in ms; ValidationError naming `where` when it is not one. */
export function checkedMs(value: unknown, where: string): number {
  try {
    return toMs(value as string);
  } catch (error) {
    throw new ValidationError(`${where}: ${(error as Error).message}`);
  }
}

const webhookSchema = z
  .object({
    url: z
      .string()
      .url()
      .refine((url) => /^https?:\/\//i.test(url), "must be an http(s) URL"),
    secret: z.string().min(1).optional(),
    headers: z.record(z.string(), z.string()).optional(),
  })
  .strict();

/**
 * An engine's outbox destinations (handlers and webhooks by topic) and retry settings.
 * Topics are whatever has a destination: a dispatcher claims only those.
 */
export class OutboxRegistry {
  readonly settings: OutboxSettings;
  private readonly handlers = new Map<string, Set<OutboxHandler<any>>>();
  private readonly webhooks = new Map<string, OutboxWebhook>();
  private readonly listeners = new Set<() => void>();

  /** Validates `createEngine({ outbox })`; throws ValidationError naming the bad field. */
  constructor(options: OutboxOptions = {}) {
    if (typeof options !== "object" || options === null)
      throw new ValidationError("createEngine: outbox must be an object ({ handlers, webhooks, maxAttempts, backoff }).");
    const maxAttempts = options.maxAttempts ?? 10;
    if (!Number.isSafeInteger(maxAttempts) || maxAttempts < 1)
      throw new ValidationError(`createEngine: outbox.maxAttempts must be a whole number ≥ 1 (got ${String(maxAttempts)}).`);
    const factor = options.backoff?.factor ?? 2;
    if (typeof factor !== "number" || !(factor >= 1))
      throw new ValidationError(`createEngine: outbox.backoff.factor must be a number ≥ 1 (got ${String(factor)}).`);
    const initialMs = checkedMs(options.backoff?.initial ?? 1000, "createEngine: outbox.backoff.initial");
    const maxMs = checkedMs(options.backoff?.max ?? "10m", "createEngine: outbox.backoff.max");
    if (maxMs < initialMs) throw new ValidationError("createEngine: outbox.backoff.max must not be shorter than outbox.backoff.initial.");
    this.settings = { maxAttempts, initialMs, maxMs, factor };
    for (const [topic, handler] of Object.entries(options.handlers ?? {})) this.add(topic, handler, "createEngine: outbox.handlers");
    for (const [topic, webhook] of Object.entries(options.webhooks ?? {})) {
      checkTopic(topic, "createEngine: outbox.webhooks");
      const parsed = webhookSchema.safeParse(webhook);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        throw new ValidationError(
          `createEngine: outbox.webhooks["${topic}"]${issue?.path.length ? `.${issue.path.join(".")}` : ""}: ${issue?.message ?? "invalid"}.`,
        );
      }
      this.webhooks.set(topic, parsed.data as OutboxWebhook);
    }
  }

  /** Adds a handler for a topic; returns a function that removes it. */
  add(topic: string, handler: OutboxHandler<any>, where = "onMessage"): () => void {
    checkTopic(topic, where);
    if (typeof handler !== "function") throw new ValidationError(`${where}: the handler for "${topic}" must be a function.`);
    let set = this.handlers.get(topic);
    if (!set) this.handlers.set(topic, (set = new Set()));
    const entry: OutboxHandler<any> = (delivery) => handler(delivery);
    set.add(entry);
    for (const listener of this.listeners) listener();
    return () => {
      set.delete(entry);
      if (set.size === 0 && this.handlers.get(topic) === set) this.handlers.delete(topic);
    };
  }

  /** Topics with at least one destination. */
  topics(): string[] {
    return [...new Set([...this.handlers.keys(), ...this.webhooks.keys()])];
  }

  handlersFor(topic: string): OutboxHandler<any>[] {
    return [...(this.handlers.get(topic) ?? [])];
  }

  webhookFor(topic: string): OutboxWebhook | undefined {
    return this.webhooks.get(topic);
  }

  /** Called when a destination is added (dispatchers claim at once). */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  /** The retry time after failed attempt `attempts` (1-based), or null when it was the last. */
  retryAt(attempts: number, now: number): number | null {
    if (attempts >= this.settings.maxAttempts) return null;
    const { initialMs, maxMs, factor } = this.settings;
    return now + Math.min(maxMs, Math.round(initialMs * factor ** (attempts - 1)));
  }
}
