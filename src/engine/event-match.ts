import { decode } from "../core/serialize.js";
import type { InboxEvent, Store } from "../core/store.js";
import { payloadMatches } from "./event-triggers.js";

/** How many buffered events of one type a matching wait looks through. */
export const MATCH_SCAN_LIMIT = 1000;

/**
 * The oldest buffered event of `type` whose payload matches and that no other wait of this execution
 * took (it is reserved in `reserved`). Events that do not match stay buffered for other waits. Looks
 * at the oldest {@link MATCH_SCAN_LIMIT} events of the type.
 */
export async function takeMatching(
  store: Pick<Store, "pendingEvents">,
  runId: string,
  type: string,
  match: Record<string, unknown>,
  reserved: Set<number>,
): Promise<InboxEvent | undefined> {
  const events = await store.pendingEvents(runId, type, MATCH_SCAN_LIMIT);
  for (const event of events) {
    if (reserved.has(event.id)) continue;
    let payload: unknown;
    try {
      payload = decode(event.payload);
    } catch {
      continue;
    }
    if (payloadMatches(payload, match)) {
      reserved.add(event.id);
      return event;
    }
  }
  return undefined;
}
