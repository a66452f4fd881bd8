import type { Context } from "hono";
import type { z } from "zod";
import { describeIssues } from "../core/schemas.js";
import { RequestError } from "./errors.js";

/**
 * Reads the request body as JSON, refusing more than `limit` bytes (413) whatever the
 * Content-Length says: the stream is counted as it is read and cancelled at the limit.
 * An empty body reads as `{}` (for POSTs without parameters, such as retry).
 */
export async function readJson(c: Context, limit: number): Promise<unknown> {
  return parseJsonText(await readText(c, limit));
}

/** Reads the request body as text, refusing more than `limit` bytes (413) as {@link readJson} does. */
export async function readText(c: Context, limit: number): Promise<string> {
  return (await readBytes(c, limit)).toString("utf8");
}

/** Reads the request body's raw bytes, refusing more than `limit` bytes (413) as {@link readJson} does. */
export async function readBytes(c: Context, limit: number): Promise<Buffer> {
  const declared = c.req.header("content-length");
  if (declared !== undefined && /^\d+$/.test(declared) && Number(declared) > limit) throw tooLarge(limit);
  const body = c.req.raw.body;
  if (!body) return Buffer.alloc(0);
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge(limit);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

/** Parses a body read by {@link readText}; empty reads as `{}`. */
export function parseJsonText(text: string): unknown {
  if (text.trim() === "") return {};
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new RequestError(
      "INVALID_INPUT",
      `The request body is not valid JSON (${(error as Error).message}). Send a JSON object with Content-Type: application/json.`,
      400,
    );
  }
}

function tooLarge(limit: number): RequestError {
  return new RequestError(
    "PAYLOAD_TOO_LARGE",
    `The request body is over the server's ${limit}-byte limit. Send less, or store large data elsewhere and pass a reference.`,
    413,
  );
}

/** Validates `value` with `schema`, or throws a 400 naming what was wrong (`what`: "body", "query", "path"). */
export function parse<S extends z.ZodType>(schema: S, value: unknown, what: string): z.output<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw new RequestError("INVALID_INPUT", `Invalid ${what}: ${describeIssues(parsed.error)}.`, 400);
}

/**
 * The query string as an object of single values (the last one wins for repeated keys), without
 * `ticket`: that one is the auth middleware's (a one-time ticket standing in for a token).
 */
export function queryOf(c: Context): Record<string, string> {
  const { ticket: _, ...query } = c.req.query();
  return query;
}

/**
 * A JSON response. Values the journal can hold but JSON cannot (bigint, Map, Set) are written in
 * their nearest JSON form, so a response never fails to serialize; Dates become ISO strings.
 */
export function json(c: Context, value: unknown, status: 200 | 201 | 202 = 200): Response {
  return c.body(toJson(value), status, { "content-type": "application/json; charset=utf-8" });
}

/**
 * A JSON response written in pieces as the client reads them (pulled, so a slow reader holds back
 * the writer): a large answer is never built as one string. `parts` yields JSON text fragments
 * that together make one JSON document (see {@link jsonObjectParts}).
 */
export function streamedJson(c: Context, parts: Iterable<string> | AsyncIterable<string>, status: 200 | 201 = 200): Response {
  const iterator = Symbol.asyncIterator in parts ? parts[Symbol.asyncIterator]() : toAsync(parts[Symbol.iterator]());
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      // A turn of the event loop per chunk: a large answer never keeps the process from others.
      await new Promise<void>((resolve) => setImmediate(resolve));
      // About 64 KiB per chunk: small fragments are batched, large ones go as they are.
      let batch = "";
      while (batch.length < 64 * 1024) {
        const next = await iterator.next();
        if (next.done) {
          if (batch) controller.enqueue(encoder.encode(batch));
          controller.close();
          return;
        }
        batch += next.value;
      }
      controller.enqueue(encoder.encode(batch));
    },
    async cancel() {
      await iterator.return?.();
    },
  });
  return c.body(body, status, { "content-type": "application/json; charset=utf-8" });
}

/**
 * The JSON text of an object, in fragments: `arrays` name fields whose items are written one by
 * one (each item's text made only when the reader gets to it); other fields are written whole.
 */
export function* jsonObjectParts(value: Record<string, unknown>, arrays: readonly string[]): Generator<string> {
  let first = true;
  for (const [key, field] of Object.entries(value)) {
    if (field === undefined) continue;
    yield `${first ? "{" : ","}${JSON.stringify(key)}:`;
    first = false;
    if (arrays.includes(key) && Array.isArray(field)) {
      yield "[";
      for (let i = 0; i < field.length; i++) yield `${i > 0 ? "," : ""}${toJson(field[i]) ?? "null"}`;
      yield "]";
    } else yield toJson(field) ?? "null";
  }
  yield first ? "{}" : "}";
}

async function* toAsync<T>(iterator: Iterator<T>): AsyncGenerator<T> {
  for (let next = iterator.next(); !next.done; next = iterator.next()) yield next.value;
}

/** JSON text of a value for the wire (see {@link json}). */
export function toJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (typeof v === "bigint") return v.toString();
    if (v instanceof Map) return Object.fromEntries(v);
    if (v instanceof Set) return [...v];
    if (typeof v === "number" && !Number.isFinite(v)) return String(v);
    return v;
  });
}
