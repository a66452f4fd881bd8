import { ValidationError } from "../../core/errors.js";
import type { RunEntriesQuery } from "../../core/store.js";

/** Largest page of {@link Store.listRunEntries}. */
export const MAX_RUN_ENTRIES_PAGE = 1000;

/**
 * Checks a {@link RunEntriesQuery} and gives the keyset position to continue after: the query's
 * `after`, or just before the first run created at `createdAfter` (run ids are never empty).
 * @throws ValidationError for a bad time or page size.
 */
export function runEntriesStart(query: RunEntriesQuery): { createdAt: number; runId: string; seq: number; limit: number } {
  if (!Number.isSafeInteger(query.createdAfter))
    throw new ValidationError(`listRunEntries: createdAfter must be a time in ms, got ${String(query.createdAfter)}.`);
  if (!Number.isInteger(query.limit) || query.limit < 1 || query.limit > MAX_RUN_ENTRIES_PAGE)
    throw new ValidationError(`listRunEntries: limit must be a whole number from 1 to ${MAX_RUN_ENTRIES_PAGE}, got ${String(query.limit)}.`);
  const after = query.after && query.after.createdAt >= query.createdAfter ? query.after : { createdAt: query.createdAfter, runId: "", seq: 0 };
  return { ...after, limit: query.limit };
}
