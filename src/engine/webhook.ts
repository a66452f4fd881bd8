import { createHmac } from "node:crypto";
import type { OutboxMessage } from "../core/outbox.js";
import { decode } from "../core/serialize.js";
import type { OutboxWebhook } from "./outbox.js";

/** The JSON body a webhook receives for one delivery. */
export function webhookBody(message: OutboxMessage, attempt: number): string {
  return JSON.stringify({
    messageId: message.messageId,
    topic: message.topic,
    runId: message.runId,
    opKey: message.opKey,
    payload: decode(message.payload),
    emittedAt: new Date(message.createdAt).toISOString(),
    attempt,
  });
}

/** `sha256=<hex HMAC-SHA256(secret, body)>`: the `cairn-signature` header a receiver checks. */
export function webhookSignature(secret: string, body: string): string {
  return `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;
}

/** POSTs one delivery; resolves on a 2xx answer, throws otherwise (the dispatcher retries). */
export async function postWebhook(webhook: OutboxWebhook, message: OutboxMessage, attempt: number, signal: AbortSignal): Promise<void> {
  const body = webhookBody(message, attempt);
  const headers: Record<string, string> = {
    ...webhook.headers,
    "content-type": "application/json",
    "cairn-message-id": message.messageId,
    "cairn-topic": message.topic,
    "cairn-attempt": String(attempt),
  };
  if (webhook.secret !== undefined) headers["cairn-signature"] = webhookSignature(webhook.secret, body);
  const response = await fetch(webhook.url, { method: "POST", headers, body, signal, redirect: "error" });
  const text = await response.text().catch(() => "");
  if (!response.ok) throw new Error(`webhook ${webhook.url} answered HTTP ${response.status}${text ? `: ${text.slice(0, 200)}` : ""}`);
}
