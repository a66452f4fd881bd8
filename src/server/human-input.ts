import { decode } from "../core/serialize.js";
import type { HumanRequest, Store } from "../core/store.js";

/** A JSON Schema, as `ctx.askHuman({ input })` journals it. */
export type InputSchema = Record<string, unknown>;

/**
 * The input schema each request was asked with (`ctx.askHuman({ input })`), by request id: the
 * JSON Schema its `human.requested` entry journals (the human_requests row does not hold it).
 * One journal read per run; requests without a schema are absent from the map.
 */
export async function inputSchemas(store: Store, requests: readonly HumanRequest[]): Promise<Map<string, InputSchema>> {
  const wanted = new Map<string, Set<string>>();
  for (const request of requests) {
    const keys = wanted.get(request.runId) ?? new Set<string>();
    keys.add(request.opKey);
    wanted.set(request.runId, keys);
  }
  const schemas = new Map<string, InputSchema>();
  await Promise.all(
    [...wanted].map(async ([runId, opKeys]) => {
      // Indexed reads only; a pending request's entry is never superseded by a loop checkpoint.
      for (const entry of await store.readJournalForResume(runId)) {
        if (entry.kind !== "human.requested" || entry.opKey === null || !opKeys.has(entry.opKey)) continue;
        const data = decode<{ requestId?: string; input?: unknown }>(entry.payload);
        if (typeof data.requestId === "string" && isSchema(data.input)) schemas.set(data.requestId, data.input);
      }
    }),
  );
  return schemas;
}

function isSchema(value: unknown): value is InputSchema {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
