import { createHash } from "node:crypto";
import { decodeKeepingSecrets, StoredText } from "./serialize.js";

/**
 * Stored forms of payloads (docs/operations/payloads.md). A payload is the encoded text of a
 * journal entry, a run's input, output or error, an inbox event or a human answer. What the
 * store holds is either that text, or one of these JSON markers in its place:
 *
 * - `{"$cairn":"blob","sha256":"<hex>","size":<bytes>}`: the text is offloaded to the `blobs`
 *   table under the SHA-256 of its UTF-8 bytes (the reference stays readable, for garbage collection);
 * - `{"$cairn":"enc","v":"<base64>"}`: the text encrypted by a {@link PayloadCodec};
 * - `{"$cairn":"lit","v":"<text>"}`: a payload that happened to look like a marker, kept as is.
 */

/** What every marker starts with; `encode` writes no other top-level payload that starts like this. */
export const MARKER_PREFIX = '{"$cairn":"';
/** The start of a blob reference; the 64 hex digits of the hash follow it. */
export const BLOB_REF_PREFIX = '{"$cairn":"blob","sha256":"';
const ENC_PREFIX = '{"$cairn":"enc",';
const LIT_PREFIX = '{"$cairn":"lit",';

/** What views put in place of a payload too large to preview: never stored, never a user value (user data is escaped). */
const ELIDED_PREFIX = '{"$cairn":"elided","size":';

/** The text a preview read returns in place of a payload of `size` bytes it did not load. */
export function elidedMarker(size: number): string {
  return `${ELIDED_PREFIX}${size}}`;
}

/**
 * The size in bytes of a payload as a preview shows it: of an {@link elidedMarker}, or of `text`
 * when it is longer than `limit` bytes; undefined when the text is small enough to show.
 */
export function elidedSize(text: string, limit: number): number | undefined {
  if (text.startsWith(ELIDED_PREFIX)) return Number(text.slice(ELIDED_PREFIX.length, -1));
  // UTF-8 has at most 3 bytes per UTF-16 unit: most texts are decided without counting.
  if (text.length * 3 <= limit) return undefined;
  const bytes = Buffer.byteLength(text, "utf8");
  return bytes > limit ? bytes : undefined;
}

/** Payloads larger than this many bytes are elided from listings (`GET /runs`, journal pages) and fetched whole on their own route. */
export const PREVIEW_BYTES = 8 * 1024;

/** The default inline limit: payloads larger than this many UTF-8 bytes are offloaded to blobs. */
export const DEFAULT_INLINE_LIMIT = 64 * 1024;

/**
 * Encrypts and decrypts payload bytes: AES-256-GCM from the environment ({@link aesGcmCodec} in
 * `cairn`), or your own (a KMS envelope, say). `encode` must record whatever `decode` needs to
 * pick its key (a key id) inside its output. Either may be synchronous or return a promise.
 * `decode` throws `PayloadKeyMissingError` for an unknown key and any error for bytes that do not
 * authenticate (they are reported as `PAYLOAD_CORRUPT`).
 * @example
 * const codec: PayloadCodec = { encode: (b) => kms.encrypt(b), decode: (b) => kms.decrypt(b) };
 * await createEngine({ payloads: { codec } });
 */
export interface PayloadCodec {
  encode(bytes: Uint8Array): Uint8Array | Promise<Uint8Array>;
  decode(bytes: Uint8Array): Uint8Array | Promise<Uint8Array>;
}

/** A parsed marker, or null for a plain payload. */
export type Marker = { kind: "blob"; hash: string; size: number } | { kind: "enc"; data: string } | { kind: "lit"; text: string };

/** True when `text` may be a marker (cheap: the hot path calls it for every payload it reads). */
export function mayBeMarker(text: string | null | undefined): boolean {
  return text !== null && text !== undefined && text.charCodeAt(0) === 123 && text.startsWith(MARKER_PREFIX);
}

/** Parses a marker; null when `text` is a plain payload. */
export function parseMarker(text: string): Marker | null {
  if (!mayBeMarker(text)) return null;
  if (!text.startsWith(BLOB_REF_PREFIX) && !text.startsWith(ENC_PREFIX) && !text.startsWith(LIT_PREFIX)) return null;
  const parsed = JSON.parse(text) as { $cairn: string; sha256?: string; size?: number; v?: string };
  if (parsed.$cairn === "blob" && typeof parsed.sha256 === "string" && typeof parsed.size === "number")
    return { kind: "blob", hash: parsed.sha256, size: parsed.size };
  if (parsed.$cairn === "enc" && typeof parsed.v === "string") return { kind: "enc", data: parsed.v };
  if (parsed.$cairn === "lit" && typeof parsed.v === "string") return { kind: "lit", text: parsed.v };
  return null;
}

/** True when a plain payload would be mistaken for a marker, so must be stored as a literal. */
export function looksLikeMarker(text: string): boolean {
  return mayBeMarker(text) && (text.startsWith(BLOB_REF_PREFIX) || text.startsWith(ENC_PREFIX) || text.startsWith(LIT_PREFIX));
}

/** The reference stored in place of an offloaded payload. */
export function blobRef(hash: string, size: number): string {
  return `${BLOB_REF_PREFIX}${hash}","size":${size}}`;
}

/** The stored form of encrypted bytes. */
export function encMarker(bytes: Uint8Array): string {
  return `${ENC_PREFIX}"v":"${Buffer.from(bytes).toString("base64")}"}`;
}

/** The stored form of a plain payload that looks like a marker. */
export function litMarker(text: string): string {
  return `${LIT_PREFIX}"v":${JSON.stringify(text)}}`;
}

/**
 * Entry kinds the stores read themselves (dead-letter bookkeeping, store/common/recovery.ts) and
 * that hold nothing of the user's (worker ids, where a claim came from): stored as they are, never
 * offloaded or sealed, or a store with a codec could not read them.
 */
export const PLAIN_ENTRY_KINDS: ReadonlySet<string> = new Set(["run.claimed", "run.released"]);

/**
 * A loop checkpoint's marker (blob or encrypted) with what the checkpoint supersedes written beside
 * the reference: `{"$cairn":"blob",…,"from":12,"keep":[15]}`. Stores read `from` and `keep` from the
 * stored payload to skip superseded history on resume (core/resume.ts `supersededBy`) without
 * fetching or decrypting it; they are journal positions, nothing of the user's.
 */
export function withSupersedes(marker: string, supersedes: { from: unknown; keep: unknown }): string {
  const from = Number.isSafeInteger(supersedes.from) ? (supersedes.from as number) : undefined;
  const keep = Array.isArray(supersedes.keep) ? supersedes.keep.filter((seq): seq is number => Number.isSafeInteger(seq)) : [];
  if (from === undefined || !marker.endsWith("}")) return marker;
  return `${marker.slice(0, -1)},"from":${from},"keep":${JSON.stringify(keep)}}`;
}

/** Hex SHA-256 of a payload's UTF-8 bytes. */
export function sha256Hex(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

/**
 * Decodes a payload as a store holds it (below the payload layer): a marker stays a marker
 * ({@link StoredText}, which encodes back to itself), anything else decodes keeping `secret()` marks.
 */
export function decodeStored(text: string): unknown {
  return parseMarker(text) ? new StoredText(text) : decodeKeepingSecrets(text);
}
