import { createHmac, timingSafeEqual } from "node:crypto";

/** The header both directions use: outgoing (outbox) deliveries carry it, incoming ones must. */
export const SIGNATURE_HEADER = "cairn-signature";

/** The name incoming webhooks used to expect; still accepted, deprecated. */
export const DEPRECATED_SIGNATURE_HEADER = "x-cairn-signature";

/** How far a signed timestamp may be from the receiver's clock, by default: 5 minutes. */
export const DEFAULT_TOLERANCE_SECONDS = 300;

const PARTS = /^t=(\d{1,12}),sha256=([0-9a-f]{64})$/i;

function mac(secret: string, timestamp: number, body: Uint8Array | string): Buffer {
  return createHmac("sha256", secret)
    .update(`${timestamp}.`, "utf8")
    .update(typeof body === "string" ? Buffer.from(body, "utf8") : body)
    .digest();
}

/**
 * `t=<unix seconds>,sha256=<hex HMAC-SHA256 of "<t>." followed by the raw body bytes>`: the
 * `cairn-signature` header. Signing the timestamp with the bytes lets a receiver refuse replays
 * of an old delivery ({@link verifyWebhookSignature}).
 * @example
 * const header = webhookSignature(secret, body, Math.floor(Date.now() / 1000));
 */
export function webhookSignature(secret: string, body: Uint8Array | string, timestampSeconds: number): string {
  return `t=${timestampSeconds},sha256=${mac(secret, timestampSeconds, body).toString("hex")}`;
}

/** Why {@link verifyWebhookSignature} refused a delivery, or undefined when it is good. */
export type SignatureProblem = "missing" | "malformed" | "mismatch" | "expired";

/**
 * Checks a `cairn-signature` header against the raw body bytes (never a decoded string, so two
 * different byte sequences cannot share a signature), in constant time, and that its timestamp is
 * within `toleranceSeconds` of `nowMs`. Undefined when the delivery is authentic and fresh.
 */
export function verifyWebhookSignature(
  secret: string,
  body: Uint8Array,
  header: string | undefined,
  options: { nowMs?: number; toleranceSeconds?: number } = {},
): SignatureProblem | undefined {
  if (header === undefined || header.trim() === "") return "missing";
  const match = PARTS.exec(header.trim());
  if (!match) return "malformed";
  const timestamp = Number(match[1]);
  const given = Buffer.from(match[2]!, "hex");
  const expected = mac(secret, timestamp, body);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return "mismatch";
  const skew = Math.abs((options.nowMs ?? Date.now()) / 1000 - timestamp);
  return skew > (options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS) ? "expired" : undefined;
}
