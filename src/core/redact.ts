import type { EntryData, EntryKind } from "./journal.js";
import { MIN_SECRET_LENGTH } from "./secret.js";
import { decode, decodeSecrets, hasSecretTag } from "./serialize.js";

/** What a secret value looks like in journal views, streams and the CLI. */
export const REDACTED = "[redacted]";

/**
 * The data of a journal entry as people may see it: a step marked `secret` keeps its real result in
 * the journal (replay needs it), but every view of the journal (`engine.journal`, the HTTP journal
 * route and stream, `cairn show`) shows {@link REDACTED} instead, and drops its search text.
 * Views go through {@link RunSecrets.entryData}, which also redacts `secret()` values and their copies.
 */
export function redactEntryData(kind: EntryKind, data: unknown): unknown {
  if (kind === "step.completed") {
    const completed = data as EntryData["step.completed"];
    if (!completed.secret) return data;
    const { text: _text, ...rest } = completed;
    return { ...rest, result: REDACTED };
  }
  return data;
}

/**
 * The secrets of one run, as its views must hide them. Secrecy is declared where a value enters the
 * journal — a step with `{ secret: true }`, a value wrapped in `secret()` (step result, run input,
 * event payload, askHuman context, loop state), an event sent with `{ secret: true }`, an `askHuman`
 * with `secret: true` (its answer's value), a tool defined with `secret: true` (its arguments and
 * results) — and propagates by text: once a secret is seen, every string of it at least
 * {@link MIN_SECRET_LENGTH} long is replaced by {@link REDACTED} wherever it shows up in the run's
 * views afterwards (a loop snapshot, the run's output, an error message, a later event).
 *
 * Fed the run's journal in seq order with {@link RunSecrets.add}; pure (no I/O).
 */
export class RunSecrets {
  /** Secret strings, longest first when matched (so a secret containing another is replaced whole). */
  private readonly atoms = new Set<string>();
  private sorted: string[] | undefined;
  /** Human requests whose answers are secret (`askHuman({ secret: true })`). */
  private readonly secretRequests = new Set<string>();
  /** Seq of the last entry added. */
  lastSeq = 0;

  /** True when this run has no secret at all (views can skip redaction). */
  get empty(): boolean {
    return this.atoms.size === 0 && this.secretRequests.size === 0;
  }

  /** Learns the secrets an entry declares. Entries must come in seq order. */
  add(entry: { seq: number; kind: EntryKind; payload: string }): void {
    this.lastSeq = Math.max(this.lastSeq, entry.seq);
    try {
      this.learn(entry);
    } catch {
      // An entry that does not decode declares nothing readable; its own view is a placeholder
      // (docs/errors/PAYLOAD_UNREADABLE.md), so the run's other entries stay viewable.
    }
  }

  private learn(entry: { kind: EntryKind; payload: string }): void {
    if (hasSecretTag(entry.payload)) this.collectTagged(entry.payload);
    if (entry.kind === "step.completed" && entry.payload.includes('"secret":true')) {
      const data = decode<EntryData["step.completed"]>(entry.payload);
      if (data.secret) this.addValue(data.result);
    } else if (entry.kind === "human.requested" && entry.payload.includes('"secret":true')) {
      const data = decode<EntryData["human.requested"] & { secret?: true }>(entry.payload);
      if (data.secret) this.secretRequests.add(data.requestId);
    } else if (entry.kind === "human.answered" && this.secretRequests.size > 0) {
      const data = decode<EntryData["human.answered"]>(entry.payload);
      if (this.secretRequests.has(data.requestId)) this.addAnswer(data.answer);
    }
  }

  /** Learns the secrets of a value that is secret as a whole (e.g. a human answer to a secret request, a pending secret event). */
  addValue(value: unknown): void {
    walk(value, (text) => {
      if (text.length >= MIN_SECRET_LENGTH && !this.atoms.has(text)) {
        this.atoms.add(text);
        this.sorted = undefined;
      }
    });
  }

  /** Learns the secret parts of an answer to a secret request. */
  addAnswer(answer: { value?: unknown; message?: string } | null | undefined): void {
    if (!answer) return;
    this.addValue(answer.value);
    if (answer.message !== undefined) this.addValue(answer.message);
  }

  /** True when answers to this human request are secret. */
  isSecretRequest(requestId: string): boolean {
    return this.secretRequests.has(requestId);
  }

  private collectTagged(payload: string): void {
    decodeSecrets(payload, (value) => {
      this.addValue(value);
      return null;
    });
  }

  /** Decodes an encoded payload for a view: `secret()` values become {@link REDACTED}, then known secret text too. */
  decode<T = unknown>(text: string | null | undefined): T {
    const value = decodeSecrets<T>(text, () => REDACTED);
    return this.value(value);
  }

  /** A copy of `value` with every known secret string replaced by {@link REDACTED}. */
  value<T>(value: T): T {
    if (this.atoms.size === 0) return value;
    this.sorted ??= [...this.atoms].sort((a, b) => b.length - a.length);
    return scrub(value, this.sorted) as T;
  }

  /** A journal entry's data as views show it. */
  entryData(kind: EntryKind, payload: string): unknown {
    let data = this.decode(payload);
    if (kind === "human.answered" && this.secretRequests.size > 0) {
      const answered = data as EntryData["human.answered"];
      if (this.secretRequests.has(answered.requestId)) data = { ...answered, answer: this.answer(answered.answer) };
    }
    return redactEntryData(kind, data);
  }

  /** An answer to a request as views show it: with a secret request, its value and message are redacted. */
  answer<A extends { value?: unknown; message?: string }>(answer: A): A {
    const out = { ...answer };
    if ("value" in out && out.value !== undefined) out.value = REDACTED;
    if (out.message !== undefined) out.message = REDACTED;
    return out;
  }
}

function walk(value: unknown, visit: (text: string) => void, depth = 0): void {
  if (depth > 64) return;
  if (typeof value === "string") visit(value);
  else if (typeof value === "number" || typeof value === "bigint") visit(String(value));
  else if (Array.isArray(value)) for (const item of value) walk(item, visit, depth + 1);
  else if (value instanceof Map) for (const item of [...value.keys(), ...value.values()]) walk(item, visit, depth + 1);
  else if (value instanceof Set) for (const item of value) walk(item, visit, depth + 1);
  else if (value !== null && typeof value === "object" && !(value instanceof Date)) for (const item of Object.values(value)) walk(item, visit, depth + 1);
}

function scrub(value: unknown, atoms: readonly string[], depth = 0): unknown {
  if (depth > 64) return value;
  if (typeof value === "string") {
    let out = value;
    for (const atom of atoms) if (out.includes(atom)) out = out.split(atom).join(REDACTED);
    return out;
  }
  if ((typeof value === "number" || typeof value === "bigint") && atoms.includes(String(value))) return REDACTED;
  if (Array.isArray(value)) return value.map((item) => scrub(item, atoms, depth + 1));
  if (value instanceof Map) return new Map([...value].map(([k, v]) => [scrub(k, atoms, depth + 1), scrub(v, atoms, depth + 1)]));
  if (value instanceof Set) return new Set([...value].map((item) => scrub(item, atoms, depth + 1)));
  if (value !== null && typeof value === "object" && !(value instanceof Date)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = scrub(v, atoms, depth + 1);
    return out;
  }
  return value;
}
