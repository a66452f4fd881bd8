import { z } from "zod";
import { ValidationError } from "./errors.js";
import { describeIssues } from "./schemas.js";

/**
 * Run tags: a few `key: value` strings a run carries (`engine.start(…, { tags })`), inherited by its
 * children and by the runs it continues as, and filterable in `listRuns`, the API and the CLI.
 * Bounded so a tag index stays small and a listing stays readable.
 */

/** At most this many tags per run. */
export const MAX_TAGS = 16;
/** A tag key: 1–64 characters of letters, digits, `_`, `-`, `.`, `:` is not allowed (it separates key and value in filters). */
export const MAX_TAG_KEY = 64;
/** A tag value: 1–256 characters, no control characters. */
export const MAX_TAG_VALUE = 256;

/** A tag key: starts with a letter; letters, digits, `_`, `-`, `.` after it. */
export const tagKeySchema = z
  .string()
  .min(1, "a tag key must not be empty")
  .max(MAX_TAG_KEY, `a tag key must be at most ${MAX_TAG_KEY} characters`)
  .regex(/^[A-Za-z][A-Za-z0-9_.-]*$/, "a tag key starts with a letter and holds only letters, digits, '_', '-' and '.'");

/** A tag value: any printable text (no control characters), 1–256 characters. */
export const tagValueSchema = z
  .string()
  .min(1, "a tag value must not be empty")
  .max(MAX_TAG_VALUE, `a tag value must be at most ${MAX_TAG_VALUE} characters`)
  // eslint-disable-next-line no-control-regex
  .regex(/^[^\u0000-\u001f\u007f-\u009f]*$/, "a tag value must not contain control characters");

/** A run's tags. */
export const tagsSchema = z.record(tagKeySchema, tagValueSchema).refine((tags) => Object.keys(tags).length <= MAX_TAGS, `at most ${MAX_TAGS} tags per run`);

/**
 * Validates tags given at a public boundary; returns a plain copy with keys in sorted order.
 * @throws ValidationError naming the bad key or value.
 * @example
 * checkTags({ customer: "acme" }, "engine.start"); // { customer: "acme" }
 */
export function checkTags(tags: unknown, where: string): Record<string, string> {
  if (typeof tags !== "object" || tags === null || Array.isArray(tags))
    throw new ValidationError(`${where}: tags must be an object of strings, e.g. { customer: "acme" }.`);
  const parsed = tagsSchema.safeParse(tags);
  if (!parsed.success) throw new ValidationError(`${where}: invalid tags (${describeIssues(parsed.error)}).`);
  const sorted: Record<string, string> = {};
  for (const key of Object.keys(parsed.data).sort()) sorted[key] = parsed.data[key]!;
  return sorted;
}

/**
 * Parses tag filters written `key:value` (API `?tag=`) or `key=value` (CLI `--tag`), one per string.
 * @throws ValidationError for a filter without a separator or with a bad key or value.
 */
export function parseTagFilters(filters: readonly string[], separator: ":" | "=", where: string): Record<string, string> {
  const tags: Record<string, string> = {};
  for (const filter of filters) {
    const at = filter.indexOf(separator);
    if (at <= 0) throw new ValidationError(`${where}: a tag filter is written key${separator}value (got ${JSON.stringify(filter.slice(0, 100))}).`);
    tags[filter.slice(0, at)] = filter.slice(at + 1);
  }
  return checkTags(tags, where);
}

/**
 * The tags a new run gets: its parent's (or predecessor's), overridden by its own.
 * Keeps the result within {@link MAX_TAGS} by dropping inherited keys last in sorted order.
 */
export function mergeTags(inherited: Record<string, string> | undefined, own: Record<string, string> | undefined): Record<string, string> | undefined {
  if (!inherited || Object.keys(inherited).length === 0) return own;
  const merged: Record<string, string> = { ...(own ?? {}) };
  for (const key of Object.keys(inherited).sort()) {
    if (Object.keys(merged).length >= MAX_TAGS) break;
    if (!(key in merged)) merged[key] = inherited[key]!;
  }
  return merged;
}
