/**
 * Journal payload codec. Plain JSON on the hot path; values JSON cannot carry
 * (Date, undefined, bigint, Map, Set, non-finite numbers) are written as tagged
 * objects `{ "$cairn": tag, v }` so they round-trip exactly.
 *
 * User data can never be read as a tag: a plain object that has a `$cairn` key of its own is
 * written as `{ "$cairn": "esc", v: [[key, value], …] }` (its entries, so the wrapper holds no
 * object with a `$cairn` key) and rebuilt on decode. Journals written before the escape decode as
 * they did: they hold no `esc` tag.
 */

import { Secret } from "./secret.js";

const TAG = "$cairn";

/** The shape errors take in the journal. */
export interface SerializedError {
  name: string;
  message: string;
  code?: string;
  stack?: string;
  /** Set when the error is known not to be worth retrying. */
  nonRetryable?: boolean;
  /** The op key of the step whose failure this is, when it came from a step. */
  opKey?: string;
  cause?: SerializedError;
  data?: unknown;
}

function needsTagging(value: unknown): boolean {
  switch (typeof value) {
    case "undefined":
    case "bigint":
      return true;
    case "number":
      return !Number.isFinite(value);
    case "object":
      return value instanceof Date || value instanceof Map || value instanceof Set || value instanceof Secret || value instanceof StoredText;
    default:
      return false;
  }
}

/**
 * A payload already in its stored form (a blob or encryption marker, see core/payloads.ts) carried
 * inside a value: {@link encode} writes its JSON text verbatim, unescaped, so a store finds the marker.
 * Only the payload layer makes these; user data cannot (it is JSON).
 */
export class StoredText {
  constructor(
    /** The stored text: a JSON object. */
    readonly text: string,
  ) {}
}

/** A plain (non-array) object with an own `$cairn` key: user data that would read as a tag unless escaped. */
function isTagShaped(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value) && Object.prototype.hasOwnProperty.call(value, TAG);
}

function replacer(this: Record<string, unknown>, key: string, value: unknown): unknown {
  const raw = this[key];
  if (raw instanceof Date) return { [TAG]: "date", v: raw.getTime() };
  if (raw === undefined && key !== "") return { [TAG]: "undef" };
  if (typeof raw === "bigint") return { [TAG]: "bigint", v: raw.toString() };
  if (typeof raw === "number" && !Number.isFinite(raw)) return { [TAG]: "num", v: String(raw) };
  if (raw instanceof Map) return { [TAG]: "map", v: [...raw.entries()] };
  if (raw instanceof Set) return { [TAG]: "set", v: [...raw.values()] };
  if (raw instanceof Secret) return { [TAG]: "secret", v: raw.value };
  // The marker's own fields are strings and numbers, so nothing below it is escaped.
  if (raw instanceof StoredText) return JSON.parse(raw.text) as unknown;
  if (isTagShaped(value)) return { [TAG]: "esc", v: Object.entries(value) };
  return value;
}

/** A reviver that turns secret tags into what `onSecret` makes of the value (by default the plain value). */
function makeReviver(onSecret: (value: unknown) => unknown) {
  return (key: string, value: unknown): unknown => {
    if (value !== null && typeof value === "object" && (value as Record<string, unknown>)[TAG] === "secret") return onSecret((value as { v?: unknown }).v);
    return reviver(key, value);
  };
}

function reviver(_key: string, value: unknown): unknown {
  if (value === null || typeof value !== "object" || !(TAG in value)) return value;
  const tagged = value as { [TAG]: string; v?: unknown };
  switch (tagged[TAG]) {
    case "secret":
      return tagged.v;
    case "date":
      return new Date(tagged.v as number);
    case "undef":
      return undefined;
    case "bigint":
      return BigInt(tagged.v as string);
    case "num":
      return Number(tagged.v as string);
    case "map":
      return new Map(tagged.v as [unknown, unknown][]);
    case "set":
      return new Set(tagged.v as unknown[]);
    case "esc":
      return unescapeEntries(tagged.v, value);
    default:
      return value;
  }
}

/** Rebuilds an escaped user object from its entries (own `__proto__` keys stay plain data). */
function unescapeEntries(entries: unknown, fallback: unknown): unknown {
  if (!Array.isArray(entries)) return fallback;
  const out: Record<string, unknown> = {};
  for (const entry of entries as unknown[]) {
    if (!Array.isArray(entry) || typeof entry[0] !== "string") return fallback;
    Object.defineProperty(out, entry[0], { value: entry[1], enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/** Encodes a value for the journal. `undefined` at the top level encodes as the empty string. */
export function encode(value: unknown): string {
  if (value === undefined) return "";
  if (typeof value === "function" || typeof value === "symbol") {
    throw new TypeError(`Cannot store a ${typeof value} in the journal: return plain data (JSON, Date, Map, Set, bigint).`);
  }
  if (typeof value === "object" && value !== null) return isPlainJson(value, 0) ? JSON.stringify(value) : JSON.stringify(value, replacer);
  return needsTagging(value) ? JSON.stringify(value, replacer) : JSON.stringify(value);
}

/** Nesting past which {@link isPlainJson} stops looking (and the replacer, which also reports cycles, takes over). */
const PLAIN_DEPTH = 32;

/**
 * True when `value` is data the replacer would leave as it is: strings, booleans, null, finite numbers,
 * and arrays (without holes or `undefined`) and plain objects (no other prototype, no own `$cairn` key)
 * of them, without a `toJSON`. JSON.stringify without the replacer writes such a value exactly as with
 * it, and faster: the replacer is a call back into JavaScript for every key.
 */
function isPlainJson(value: unknown, depth: number): boolean {
  switch (typeof value) {
    case "string":
    case "boolean":
      return true;
    case "number":
      return Number.isFinite(value);
    case "object": {
      if (value === null) return true;
      if (depth >= PLAIN_DEPTH) return false;
      if (Array.isArray(value)) {
        if ((value as { toJSON?: unknown }).toJSON !== undefined) return false;
        for (let i = 0; i < value.length; i++) {
          const item: unknown = value[i];
          if (item === undefined || !isPlainJson(item, depth + 1)) return false;
        }
        return true;
      }
      const proto: unknown = Object.getPrototypeOf(value);
      if ((proto !== Object.prototype && proto !== null) || Object.prototype.hasOwnProperty.call(value, TAG)) return false;
      for (const key in value) {
        if (!Object.prototype.hasOwnProperty.call(value, key)) return false;
        const item = (value as Record<string, unknown>)[key];
        if (item === undefined || !isPlainJson(item, depth + 1)) return false;
      }
      return true;
    }
    default:
      return false;
  }
}

/** Decodes a value written by {@link encode}. */
export function decode<T = unknown>(text: string | null | undefined): T {
  if (text === "" || text === null || text === undefined) return undefined as T;
  return (text.includes(TAG) ? JSON.parse(text, reviver) : JSON.parse(text)) as T;
}

/**
 * Decodes like {@link decode}, but a value marked `secret()` becomes what `onSecret` makes of it:
 * `(v) => new Secret(v)` keeps the mark (so re-encoding keeps the tag), a view replaces it.
 */
export function decodeSecrets<T = unknown>(text: string | null | undefined, onSecret: (value: unknown) => unknown): T {
  if (text === "" || text === null || text === undefined) return undefined as T;
  return (text.includes(TAG) ? JSON.parse(text, makeReviver(onSecret)) : JSON.parse(text)) as T;
}

/** Decodes keeping `secret()` marks, so the value encodes again with its tags. */
export function decodeKeepingSecrets<T = unknown>(text: string | null | undefined): T {
  return decodeSecrets<T>(text, (value) => new Secret(value));
}

/** True when an encoded payload holds a value marked `secret()`. */
export function hasSecretTag(text: string): boolean {
  return text.includes(`"${TAG}":"secret"`);
}

/** Turns any thrown value into a {@link SerializedError}. */
export function serializeError(error: unknown, depth = 0): SerializedError {
  if (error instanceof Error) {
    const out: SerializedError = { name: error.name, message: error.message };
    const extra = error as Error & { code?: unknown; nonRetryable?: unknown; opKey?: unknown; data?: unknown };
    if (typeof extra.code === "string") out.code = extra.code;
    if (error.stack) out.stack = error.stack;
    if (extra.nonRetryable === true) out.nonRetryable = true;
    if (typeof extra.opKey === "string") out.opKey = extra.opKey;
    if (extra.data !== undefined) out.data = extra.data;
    if (error.cause !== undefined && depth < 4) out.cause = serializeError(error.cause, depth + 1);
    return out;
  }
  return { name: "Error", message: typeof error === "string" ? error : safeString(error) };
}

function safeString(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** Byte length of an encoded payload, as stored (UTF-8). */
export function byteLength(text: string): number {
  return Buffer.byteLength(text, "utf8");
}
