import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { ValidationError } from "../../core/errors.js";
import { PayloadKeyMissingError } from "../../core/payload-errors.js";
import type { PayloadCodec } from "../../core/payloads.js";

/**
 * AES-256-GCM payload encryption with a keyring, so keys can rotate: each ciphertext records
 * the id of the key that sealed it, new writes use `currentKeyId`, and old payloads stay
 * readable while their key is in `keys`.
 */
export interface AesGcmCodecOptions {
  /** Key id → 32-byte key (a Buffer, or base64 text). */
  keys: Record<string, Uint8Array | string>;
  /** The id of the key new payloads are encrypted with; must be in `keys`. */
  currentKeyId: string;
}

const VERSION = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_ID = /^[A-Za-z0-9._-]{1,64}$/;

/**
 * A {@link PayloadCodec} that encrypts with AES-256-GCM. Layout of a ciphertext:
 * `[1][key id length][key id (UTF-8)][96-bit random IV][128-bit tag][ciphertext]`; the header
 * (version and key id) is authenticated too, so changing any byte makes decryption fail.
 * @throws ValidationError for a key that is not 32 bytes, a bad key id, or a current key missing from `keys`.
 * @example
 * const codec = aesGcmCodec({ keys: { "2026-01": process.env.KEY_2026_01! }, currentKeyId: "2026-01" });
 * await createEngine({ payloads: { codec } });
 */
export function aesGcmCodec(options: AesGcmCodecOptions): PayloadCodec & { readonly currentKeyId: string } {
  const ring = new Map<string, Buffer>();
  for (const [id, key] of Object.entries(options.keys)) {
    if (!KEY_ID.test(id)) throw new ValidationError(`Encryption key id "${id}" is not valid: use 1–64 letters, digits, ".", "_" or "-".`);
    const bytes = typeof key === "string" ? Buffer.from(key, "base64") : Buffer.from(key);
    if (bytes.length !== 32)
      throw new ValidationError(`Encryption key "${id}" is ${bytes.length} bytes; AES-256 needs 32 (base64 of 32 random bytes: \`openssl rand -base64 32\`).`);
    ring.set(id, bytes);
  }
  const currentKey = ring.get(options.currentKeyId);
  if (!currentKey)
    throw new ValidationError(`The current encryption key id "${options.currentKeyId}" is not in the keyring (${[...ring.keys()].join(", ") || "empty"}).`);
  const currentHeader = header(options.currentKeyId);
  return {
    currentKeyId: options.currentKeyId,
    encode(bytes) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv("aes-256-gcm", currentKey, iv);
      cipher.setAAD(currentHeader);
      const body = Buffer.concat([cipher.update(bytes), cipher.final()]);
      return Buffer.concat([currentHeader, iv, cipher.getAuthTag(), body]);
    },
    decode(bytes) {
      const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      const keyId = peekKeyId(buffer);
      if (keyId === undefined) throw new Error("not an AES-256-GCM payload of this format");
      const key = ring.get(keyId);
      if (!key) throw new PayloadKeyMissingError(keyId);
      const start = 2 + Buffer.byteLength(keyId);
      const iv = buffer.subarray(start, start + IV_BYTES);
      const tag = buffer.subarray(start + IV_BYTES, start + IV_BYTES + TAG_BYTES);
      const decipher = createDecipheriv("aes-256-gcm", key, iv);
      decipher.setAAD(buffer.subarray(0, start));
      decipher.setAuthTag(tag);
      return Buffer.concat([decipher.update(buffer.subarray(start + IV_BYTES + TAG_BYTES)), decipher.final()]);
    },
  };
}

/** The key id recorded in an {@link aesGcmCodec} ciphertext, or undefined when `bytes` is not one. */
export function peekKeyId(bytes: Uint8Array): string | undefined {
  if (bytes.length < 2 || bytes[0] !== VERSION) return undefined;
  const length = bytes[1]!;
  if (bytes.length < 2 + length + IV_BYTES + TAG_BYTES) return undefined;
  return Buffer.from(bytes.buffer, bytes.byteOffset + 2, length).toString("utf8");
}

function header(keyId: string): Buffer {
  const id = Buffer.from(keyId, "utf8");
  return Buffer.concat([Buffer.from([VERSION, id.length]), id]);
}

/**
 * The codec the environment asks for, or null when it asks for none:
 * - `CAIRN_ENCRYPTION_KEYS="id1:base64,id2:base64"`: the keyring (old and new keys);
 * - `CAIRN_ENCRYPTION_KEY=base64` (with `CAIRN_ENCRYPTION_KEY_ID`, default `"default"`): one more key;
 * - `CAIRN_ENCRYPTION_KEY_ID`: the key new payloads use (default: `CAIRN_ENCRYPTION_KEY`'s, else the first of the ring).
 * @throws ValidationError naming the variable that is malformed.
 * @example
 * // CAIRN_ENCRYPTION_KEYS="k2:…,k1:…" CAIRN_ENCRYPTION_KEY_ID=k2
 * const codec = aesGcmCodecFromEnv(); // encrypts with k2, reads k1 and k2
 */
export function aesGcmCodecFromEnv(env: NodeJS.ProcessEnv = process.env): (PayloadCodec & { readonly currentKeyId: string }) | null {
  const keys: Record<string, string> = {};
  let first: string | undefined;
  for (const part of (env.CAIRN_ENCRYPTION_KEYS ?? "")
    .split(",")
    .map((p) => p.trim())
    .filter(Boolean)) {
    const colon = part.indexOf(":");
    if (colon <= 0) throw new ValidationError(`CAIRN_ENCRYPTION_KEYS: "${part.slice(0, 20)}…" is not "<key id>:<base64 key>"; separate keys with commas.`);
    const id = part.slice(0, colon);
    keys[id] = part.slice(colon + 1);
    first ??= id;
  }
  const single = env.CAIRN_ENCRYPTION_KEY?.trim();
  const singleId = env.CAIRN_ENCRYPTION_KEY_ID?.trim() || undefined;
  if (single) keys[singleId ?? "default"] = single;
  if (Object.keys(keys).length === 0) return null;
  const currentKeyId = singleId ?? (single ? "default" : first!);
  return aesGcmCodec({ keys, currentKeyId });
}
