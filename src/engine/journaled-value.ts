import { PayloadTooLargeError } from "../core/errors.js";
import { newEntry, type EntryData, type EntryKind, type NewEntry } from "../core/journal.js";
import { byteLength, decode } from "../core/serialize.js";

/**
 * Builds an entry that carries a user value (a step result, a run output), encoding it once.
 * Returns the entry and the decoded copy workflow code receives — the same value replay would
 * give, not the live object. Throws PayloadTooLargeError when the payload exceeds `limit`, and
 * the codec's TypeError for values the journal cannot hold.
 */
export function journaledValue<K extends EntryKind>(
  kind: K,
  opKey: string | null,
  data: EntryData[K],
  pick: (copy: EntryData[K]) => unknown,
  limit: number,
  what: string,
): { entry: NewEntry<K>; value: unknown } {
  const entry = newEntry(kind, opKey, data);
  const bytes = byteLength(entry.payload);
  if (bytes > limit) throw new PayloadTooLargeError(what, bytes, limit);
  const value = pick(data);
  // A primitive comes back from the journal as itself (-0 is written as 0): no need to decode it.
  return { entry, value: isSelfDecoding(value) ? value : pick(decode<EntryData[K]>(entry.payload)) };
}

/** True for values that decode from their encoding as the very same value. */
function isSelfDecoding(value: unknown): boolean {
  switch (typeof value) {
    case "string":
    case "boolean":
    case "undefined":
      return true;
    case "number":
      return Number.isFinite(value) && !Object.is(value, -0);
    default:
      return value === null;
  }
}
