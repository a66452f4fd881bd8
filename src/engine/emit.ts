import { NonDeterminismError, PayloadTooLargeError, ValidationError } from "../core/errors.js";
import { newEntry, type EntryData, type NewEntry } from "../core/journal.js";
import { checkTopic, outboxMessageId } from "../core/outbox.js";
import { byteLength, encode } from "../core/serialize.js";

/** Options of `ctx.emit`. */
export interface EmitOptions {
  /**
   * The op name (its key is `name#k`). Default: the topic. Give one when the same code path may
   * emit to different topics, so the op keys (and message ids) stay stable.
   */
  name?: string;
}

/** What `ctx.emit` resolves to once the message is journaled (and so in the outbox). */
export interface EmittedMessage {
  /** `<runId>:<opKey>`: every delivery of the message carries it, for consumers to deduplicate. */
  messageId: string;
}

/** A `ctx.emit` call, checked before anything is journaled. */
export interface CheckedEmit {
  topic: string;
  name: string;
  payload: unknown;
}

/**
 * Validates a `ctx.emit` call before anything is journaled: ValidationError for a bad topic, options or
 * payload, PayloadTooLargeError for a payload over `limit` bytes.
 */
export function checkEmit(topic: unknown, payload: unknown, options: EmitOptions | undefined, limit: number): CheckedEmit {
  const checked = checkTopic(topic, "ctx.emit");
  if (options !== undefined && (typeof options !== "object" || options === null)) throw new ValidationError("ctx.emit: options must be an object ({ name }).");
  const name = options?.name ?? checked;
  let encoded: string;
  try {
    encoded = encode(payload);
  } catch (error) {
    throw new ValidationError(`ctx.emit("${checked}"): the payload must be plain data the journal can hold (${(error as Error).message}).`);
  }
  const bytes = byteLength(encoded);
  if (bytes > limit) throw new PayloadTooLargeError(`ctx.emit("${checked}") payload`, bytes, limit);
  return { topic: checked, name, payload };
}

/**
 * The entry that emits the message: its commit inserts the outbox row in the same transaction
 * (store/common/plan-write `insert-outbox`).
 */
export function emitEntry(runId: string, key: string, emit: CheckedEmit): NewEntry<"outbox.emitted"> {
  return newEntry("outbox.emitted", key, { topic: emit.topic, payload: emit.payload, messageId: outboxMessageId(runId, key) });
}

/** A NonDeterminismError when the journal emitted to another topic under this key, else undefined. */
export function emitMismatch(key: string, journaled: { seq: number; kind: string; data: unknown } | undefined, topic: string): NonDeterminismError | undefined {
  if (journaled?.kind !== "outbox.emitted") return undefined;
  const data = journaled.data as EntryData["outbox.emitted"];
  if (data.topic === topic) return undefined;
  return new NonDeterminismError(key, `an emit to topic "${data.topic}" (seq ${journaled.seq})`, `emits to topic "${topic}"`);
}
