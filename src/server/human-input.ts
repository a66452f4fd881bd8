import { decode } from "../core/serialize.js";
import type { HumanRequest, Store } from "../core/store.js";

/** A JSON Schema, as `ctx.askHuman({ input })` journals it. */
export type InputSchema = Record<string, unknown>;

/** What a request's `human.requested` entry adds to its view. */
export interface RequestDetails {
  /** The JSON Schema of the answer's value, when it was asked with one. */
  input?: InputSchema;
  /** When this request re-asks because the input schema refused the previous answer: which request, and why. */
  refused?: { requestId: string; message: string };
  /** Answers that need a note: every one (`true`) or those choosing these options. */
  requireNote?: true | string[];
}

/**
 * The input schema each request was asked with (`ctx.askHuman({ input })`), the answers that need a
 * note, and the refusal it re-asks after, by request id: from its `human.requested` entry (the human_requests row holds
 * neither). One journal read per run; requests with neither are absent from the map.
 */
export async function requestDetails(store: Pick<Store, "readJournalForResume">, requests: readonly HumanRequest[]): Promise<Map<string, RequestDetails>> {
  const wanted = new Map<string, Set<string>>();
  for (const request of requests) {
    const keys = wanted.get(request.runId) ?? new Set<string>();
    keys.add(request.opKey);
    wanted.set(request.runId, keys);
  }
  const details = new Map<string, RequestDetails>();
  await Promise.all(
    [...wanted].map(async ([runId, opKeys]) => {
      // Indexed reads only; a pending request's entry is never superseded by a loop checkpoint.
      for (const entry of await store.readJournalForResume(runId)) {
        if (entry.kind !== "human.requested" || entry.opKey === null || !opKeys.has(entry.opKey)) continue;
        let data: { requestId?: unknown; input?: unknown; refused?: { requestId?: unknown; message?: unknown }; requireNote?: unknown };
        try {
          data = decode(entry.payload);
        } catch {
          continue; // an unreadable entry adds nothing; the request's row is still listed
        }
        if (typeof data.requestId !== "string") continue;
        const found: RequestDetails = {};
        if (isSchema(data.input)) found.input = data.input;
        if (typeof data.refused?.requestId === "string" && typeof data.refused.message === "string") {
          found.refused = { requestId: data.refused.requestId, message: data.refused.message };
        }
        if (data.requireNote === true) found.requireNote = true;
        else if (Array.isArray(data.requireNote)) found.requireNote = data.requireNote.filter((o): o is string => typeof o === "string");
        if (found.input || found.refused || found.requireNote) details.set(data.requestId, found);
      }
    }),
  );
  return details;
}

function isSchema(value: unknown): value is InputSchema {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
