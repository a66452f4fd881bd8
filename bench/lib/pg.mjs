// PostgreSQL helpers for the bench: the `pg` client (the one the PostgreSQL store uses), loaded
// lazily so SQLite-only runs work without it, and throwaway schemas.

import { rootRequire } from "./root-deps.mjs";

let pgModule;

/** The `pg` module, or an Error saying why it cannot be loaded. */
export async function loadPg() {
  if (pgModule) return pgModule;
  try {
    pgModule = rootRequire("pg");
    return pgModule;
  } catch (error) {
    throw new Error(`the "pg" package cannot be loaded (${error.message}); install dependencies with npm ci`);
  }
}

/** Runs fn with one connected client, then closes it. */
export async function withPgClient(url, fn) {
  const pg = await loadPg();
  const client = new pg.Client({ connectionString: baseUrl(url) });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** A connected client (caller ends it). */
export async function connectPg(url) {
  const pg = await loadPg();
  const client = new pg.Client({ connectionString: baseUrl(url) });
  await client.connect();
  return client;
}

/** The URL without Cairn's `schema` parameter, for a plain client. */
export function baseUrl(url) {
  const parsed = new URL(url);
  parsed.searchParams.delete("schema");
  return parsed.toString();
}

/** `url` with `?schema=name`. */
export function withSchema(url, schema) {
  const parsed = new URL(url);
  parsed.searchParams.set("schema", schema);
  return parsed.toString();
}

export async function dropSchema(url, schema) {
  await withPgClient(url, (client) => client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`));
}
