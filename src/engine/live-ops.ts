import { RunFinishedError, ValidationError, isCairnError } from "../core/errors.js";
import { newEntry, type EntryData, type NewEntry } from "../core/journal.js";
import { nextRunId, type RunRecord } from "../core/run.js";
import { byteLength, decode, encode, serializeError, type SerializedError } from "../core/serialize.js";
import type { Store } from "../core/store.js";

/** The reads that follow a run's continue-as-new chain. */
export type ChainStore = Pick<Store, "readJournal" | "getRun">;
import { PayloadTooLargeError } from "../core/errors.js";
import type { Workflow, WorkflowContext } from "./workflow.js";

/**
 * The ops that let clients talk to a live run (`ctx.publish`, `ctx.handle`) and `ctx.continueAsNew`:
 * validation and journal entries here, the ops in ops/journal-once.ts and run-end.ts call them. See docs/live-runs.md.
 */

/** The event type a request to handler `name` is delivered as (`engine.request`). */
export function requestEventType(name: string): string {
  return `cairn.request:${name}`;
}

/** What `engine.request` puts in the run's inbox. */
export interface RequestEnvelope {
  requestId: string;
  payload: unknown;
}

/** A published value or request name: 1–128 characters, no `/` (op keys use it). */
export function checkLiveName(name: unknown, where: string): string {
  if (typeof name !== "string" || name.length === 0 || name.length > 128 || name.includes("/") || /\p{Cc}/u.test(name)) {
    throw new ValidationError(
      `${where}: the name must be 1–128 characters without "/" or control characters (got ${JSON.stringify(String(name).slice(0, 140))}).`,
    );
  }
  return name;
}

/** Checks a value the journal must hold (plain data within `limit` bytes); returns its decoded copy. */
export function journalable(value: unknown, limit: number, what: string): unknown {
  let encoded: string;
  try {
    encoded = encode(value);
  } catch (error) {
    throw new ValidationError(`${what} must be plain data the journal can hold (${(error as Error).message}).`);
  }
  const bytes = byteLength(encoded);
  if (bytes > limit) throw new PayloadTooLargeError(what, bytes, limit);
  return decode(encoded);
}

/** The `publish.value` entry of `ctx.publish(name, value)` under op key `key`. */
export function publishEntry(key: string, name: string, value: unknown): NewEntry<"publish.value"> {
  return newEntry("publish.value", key, { name, value });
}

/** The `request.replied` entry of a handler's reply (or its failure). */
export function replyEntry(
  key: string,
  name: string,
  requestId: string,
  outcome: { reply: unknown } | { error: SerializedError },
): NewEntry<"request.replied"> {
  return newEntry("request.replied", key, "error" in outcome ? { name, requestId, error: outcome.error } : { name, requestId, reply: outcome.reply });
}

/** Control-flow errors of the engine that end a handler loop instead of becoming a reply. */
function isEngineSignal(error: unknown): boolean {
  return isCairnError(error, "LEASE_LOST") || isCairnError(error, "NON_DETERMINISM");
}

/**
 * Serves requests to handler `name` for the rest of the run: waits for the next request (a journaled
 * event wait keyed `handle:<name>#k`), runs `fn` as workflow code (its ops are journaled like any
 * other, so a replay runs it again with the same results), then journals its reply (`reply`). A
 * handler that throws replies with the error. Returns at once; the loop ends with the run.
 */
export function serveRequests(
  ctx: WorkflowContext,
  name: string,
  fn: (payload: unknown) => unknown,
  reply: (requestId: string, outcome: { reply: unknown } | { error: SerializedError }) => Promise<unknown>,
  limit: number,
): void {
  const loop = async () => {
    for (;;) {
      const request = await ctx.waitForEvent<RequestEnvelope>(requestEventType(name), { name: `handle:${name}` });
      let outcome: { reply: unknown } | { error: SerializedError };
      try {
        outcome = { reply: journalable((await fn(request.payload)) ?? null, limit, `The reply of handler "${name}"`) };
      } catch (error) {
        if (isEngineSignal(error)) return;
        outcome = { error: serializeError(error) };
      }
      await reply(request.requestId, outcome);
    }
  };
  void loop().catch(() => {});
}

/** The `run.continued` entry that ends `run` and creates its successor with `input` (validated) and `tags`. */
export function continueEntry(
  run: RunRecord,
  workflow: Workflow<any, any>,
  input: unknown,
  tags: Record<string, string>,
  limit: number,
): NewEntry<"run.continued"> {
  const data: EntryData["run.continued"] = {
    nextRunId: nextRunId(run.runId),
    workflow: workflow.name,
    version: workflow.version,
    input: journalable(input, limit, "ctx.continueAsNew: the input"),
  };
  if (Object.keys(tags).length > 0) data.tags = tags;
  return newEntry("run.continued", null, data);
}

/** The run `runId` continued as, when it ended with `run.continued` (one indexed read of its last entry). */
export async function continuedTo(store: ChainStore, run: RunRecord): Promise<string | undefined> {
  if (run.status !== "completed") return undefined;
  const [last] = await store.readJournal(run.runId, { afterSeq: run.lastSeq - 1, limit: 1 });
  return last?.kind === "run.continued" ? decode<EntryData["run.continued"]>(last.payload).nextRunId : undefined;
}

/** The run `run` continued from (its `run.created` says), if any. */
export async function continuedFrom(store: ChainStore, runId: string): Promise<string | undefined> {
  const [first] = await store.readJournal(runId, { limit: 1 });
  return first?.kind === "run.created" ? decode<EntryData["run.created"]>(first.payload).continuedFrom : undefined;
}

/**
 * Follows a chain of continued runs from `run` to its last run (at most `max` links, against a
 * corrupted store looping forever). Returns the last run's row.
 */
export async function followChain(store: ChainStore, run: RunRecord, max = 1_000_000): Promise<RunRecord> {
  let current = run;
  for (let i = 0; i < max; i++) {
    const next = await continuedTo(store, current);
    if (next === undefined) return current;
    const found = await store.getRun(next);
    // Created by the same commit that ended `current`: missing only if it was pruned.
    if (!found) throw new RunFinishedError(current.runId, "continued as a run that no longer exists", `follow "${next}"`);
    current = found;
  }
  return current;
}
