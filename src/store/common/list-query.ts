import { ValidationError } from "../../core/errors.js";

/** Default page size of `listRuns`. */
export const DEFAULT_LIST_LIMIT = 50;
/** Largest page size any list query returns. */
export const MAX_LIST_LIMIT = 1000;

/**
 * Validates a page size: a positive integer, capped at {@link MAX_LIST_LIMIT}.
 * @throws ValidationError for zero, negative or fractional limits.
 */
export function pageLimit(limit: number | undefined, fallback = DEFAULT_LIST_LIMIT): number {
  if (limit === undefined) return fallback;
  if (!Number.isInteger(limit) || limit < 1) throw new ValidationError(`limit must be a positive integer, got ${String(limit)}.`);
  return Math.min(limit, MAX_LIST_LIMIT);
}

/** Where a page of runs ended: the last run's createdAt and runId. */
export interface RunCursor {
  createdAt: number;
  runId: string;
}

/** Encodes a {@link RunCursor} as an opaque URL-safe string. */
export function encodeCursor(cursor: RunCursor): string {
  return Buffer.from(JSON.stringify([cursor.createdAt, cursor.runId]), "utf8").toString("base64url");
}

/**
 * Decodes a cursor made by {@link encodeCursor}.
 * @throws ValidationError when it was not.
 */
export function decodeCursor(text: string, start = "start from the newest run"): RunCursor {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(text, "base64url").toString("utf8"));
  } catch {
    parsed = undefined;
  }
  if (!Array.isArray(parsed) || parsed.length !== 2 || !Number.isSafeInteger(parsed[0]) || typeof parsed[1] !== "string") {
    throw new ValidationError(`Invalid cursor "${text}": pass the nextCursor of a previous page unchanged, or omit it to ${start}.`);
  }
  return { createdAt: parsed[0] as number, runId: parsed[1] };
}

/**
 * Orders strings by Unicode code point, which is the byte order of their UTF-8
 * form: the order SQLite's BINARY collation and PostgreSQL's "C" collation use.
 */
export function compareText(a: string, b: string): number {
  if (a === b) return 0;
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.codePointAt(i) ?? 0;
    const y = b.codePointAt(i) ?? 0;
    if (x !== y) return x - y;
    if (x > 0xffff) i++;
  }
  return a.length - b.length;
}

/** `%text%` for `LIKE … ESCAPE '\'`: the text's own `%`, `_` and backslash match themselves, not as wildcards. */
export function likePattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}
