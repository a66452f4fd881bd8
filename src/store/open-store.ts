import { resolve } from "node:path";
import { StoreUrlError } from "../core/errors.js";
import type { Store } from "../core/store.js";
import { MemoryStore } from "./memory/memory-store.js";
import { isPostgresUrl, type PostgresStoreOptions } from "./postgres/postgres-config.js";
import type { SqliteStoreOptions } from "./sqlite/sqlite-open.js";
import { SqliteStore } from "./sqlite/sqlite-store.js";

/** Options for {@link openStore}. */
export interface OpenStoreOptions extends SqliteStoreOptions, PostgresStoreOptions {
  /** Directory that relative `sqlite:` paths are resolved against. Default `process.cwd()`. */
  cwd?: string;
}

/**
 * Opens the store a URL names and brings its schema up to date:
 * `sqlite:<path>` (relative to `cwd`), `sqlite::memory:`, `memory:`, or
 * `postgres://…` / `postgresql://…` (query parameters `schema`, `allowWeakDurability`, `clock`:
 * see {@link PostgresStoreOptions}; they win over the same options).
 * @throws StoreUrlError for any other URL.
 * @throws StoreInvalidError / SchemaTooNewError for a SQLite file or PostgreSQL schema it must not touch,
 * or a PostgreSQL server that can lose acknowledged commits.
 * @example
 * const store = await openStore("sqlite:.cairn/cairn.db");
 * const shared = await openStore("postgres://cairn@db.internal/cairn?schema=prod");
 */
export async function openStore(url: string, options: OpenStoreOptions = {}): Promise<Store> {
  const store = await createStore(url, options);
  try {
    await store.migrate();
  } catch (error) {
    await store.close();
    throw error;
  }
  return store;
}

async function createStore(url: string, options: OpenStoreOptions): Promise<Store> {
  if (url === "memory:") return new MemoryStore();
  if (isPostgresUrl(url)) {
    // Loaded on demand, so SQLite users never load the PostgreSQL driver.
    const { PostgresStore } = await import("./postgres/postgres-store.js");
    return new PostgresStore(url, options);
  }
  if (url.startsWith("sqlite:")) {
    const path = url.slice("sqlite:".length);
    if (path === ":memory:") return new SqliteStore(path, options);
    if (path.trim() !== "" && !path.startsWith("//")) return new SqliteStore(resolve(options.cwd ?? process.cwd(), path), options);
  }
  throw new StoreUrlError(url);
}

/** The store URL used when none is given: `$CAIRN_STORE` (when set and non-empty), else `sqlite:.cairn/cairn.db`. */
export function defaultStoreUrl(): string {
  return process.env.CAIRN_STORE || "sqlite:.cairn/cairn.db";
}
