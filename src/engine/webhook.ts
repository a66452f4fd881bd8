import type { OutboxMessage } from "../core/outbox.js";
import { decode } from "../core/serialize.js";
import type { OutboxWebhook } from "./outbox.js";
import { SIGNATURE_HEADER, webhookSignature } from "./webhook-signature.js";

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
  if (webhook.secret !== undefined) headers[SIGNATURE_HEADER] = webhookSignature(webhook.secret, body, Math.floor(Date.now() / 1000));
  const response = await fetch(webhook.url, { method: "POST", headers, body, signal, redirect: "error" });
  const text = await response.text().catch(() => "");
  if (!response.ok) throw new Error(`webhook ${webhook.url} answered HTTP ${response.status}${text ? `: ${text.slice(0, 200)}` : ""}`);
}
