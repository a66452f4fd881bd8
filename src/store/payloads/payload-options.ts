import { ValidationError } from "../../core/errors.js";
import type { PayloadCodec } from "../../core/payloads.js";

/** How payloads are stored: see docs/operations/payloads.md. */
export interface PayloadOptions {
  /**
   * Payloads larger than this many UTF-8 bytes are stored once in the `blobs` table, by SHA-256,
   * and the row keeps a reference. Default 64 KiB ({@link DEFAULT_INLINE_LIMIT}); `Infinity` never offloads.
   */
  inlineLimit?: number;
  /**
   * Encrypts every payload at rest (entries, run input/output/error, inbox events, human answers
   * and contexts, blobs). Default: AES-256-GCM from `CAIRN_ENCRYPTION_KEY(S)` when set (see
   * `aesGcmCodecFromEnv`), else none. `null` turns encryption off whatever the environment says.
   */
  codec?: PayloadCodec | null;
}

/**
 * The inline limit set by `CAIRN_PAYLOAD_INLINE_LIMIT` (a whole number of bytes, or `Infinity`), or
 * undefined when unset: how processes started by the CLI (`cairn worker`, `serve`, `dev`) choose it.
 *
 * @throws ValidationError naming the variable when its value is not a byte count.
 * @example
 * // CAIRN_PAYLOAD_INLINE_LIMIT=16384
 * withPayloads(store, { inlineLimit: inlineLimitFromEnv() }); // offloads payloads over 16 KiB
 */
export function inlineLimitFromEnv(env: NodeJS.ProcessEnv = process.env): number | undefined {
  const raw = env.CAIRN_PAYLOAD_INLINE_LIMIT?.trim();
  if (raw === undefined || raw === "") return undefined;
  if (raw === "Infinity") return Infinity;
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(Number(raw))) {
    throw new ValidationError(
      `CAIRN_PAYLOAD_INLINE_LIMIT must be a whole number of bytes (e.g. 65536), or Infinity to never offload payloads; got "${raw.slice(0, 40)}".`,
    );
  }
  return Number(raw);
}
