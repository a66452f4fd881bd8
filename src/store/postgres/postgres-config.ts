import { createHash } from "node:crypto";
import { StoreUrlError, ValidationError } from "../../core/errors.js";

/** How a `PostgresStore` connects and behaves. URL query parameters override these. */
export interface PostgresStoreOptions {
  /**
   * The schema that holds every Cairn table; created by `migrate()` if missing. Default `cairn`.
   * Letters, digits and underscores, at most 63 characters. URL: `?schema=name`.
   */
  schema?: string;
  /**
   * Open a server that runs with `fsync=off` or `synchronous_commit=off`, which can lose commits
   * Cairn has reported durable. Default false: such a server is refused. URL: `?allowWeakDurability=1`.
   */
  allowWeakDurability?: boolean;
  /**
   * Whose clock times leases, timers and journal entries. `database` (default): PostgreSQL's,
   * so workers with skewed clocks cannot fire a timer early or steal a live lease; the store then
   * ignores the `now` arguments of the Store port and offers `now()`. `caller`: the `now` arguments,
   * for tests that drive time. URL: `?clock=caller`.
   */
  clock?: "database" | "caller";
  /** Most connections the pool opens. Default 10. */
  poolSize?: number;
  /** How long to wait for a connection before failing the operation, in ms. Default 10000. */
  connectTimeoutMs?: number;
  /**
   * Called with connection errors that no operation is waiting for: an idle pooled connection
   * dropped, or the LISTEN connection lost (it reconnects by itself). Default: ignored.
   */
  onConnectionError?: (error: Error) => void;
}

/** A store URL and its options, resolved. */
export interface PostgresConfig {
  /** For `pg`: the URL without Cairn's parameters and without `options`. */
  connectionString: string;
  /** Server options for every connection: the URL's `options` plus Cairn's `search_path`. */
  serverOptions: string;
  /** The URL without password, with the schema, for messages and `Store.url`. */
  displayUrl: string;
  schema: string;
  allowWeakDurability: boolean;
  clock: "database" | "caller";
  poolSize: number;
  connectTimeoutMs: number;
}

/** The schema used when neither the URL nor the options name one. */
export const DEFAULT_SCHEMA = "cairn";

const SCHEMA_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;
const CAIRN_PARAMS = ["schema", "allowWeakDurability", "clock", "poolSize"] as const;

/** True for `postgres://…` and `postgresql://…` URLs. */
export function isPostgresUrl(url: string): boolean {
  return /^postgres(ql)?:\/\//i.test(url);
}

/**
 * Resolves a `postgres://` / `postgresql://` URL and options. Cairn's query parameters
 * (`schema`, `allowWeakDurability`, `clock`) are taken out before the URL goes to `pg`.
 * @throws StoreUrlError for a URL that does not parse; ValidationError for a bad parameter.
 */
export function resolvePostgresConfig(url: string, options: PostgresStoreOptions = {}): PostgresConfig {
  if (!isPostgresUrl(url)) throw new StoreUrlError(url);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new StoreUrlError(url);
  }
  const params = parsed.searchParams;
  const schema = params.get("schema") ?? options.schema ?? DEFAULT_SCHEMA;
  if (!SCHEMA_NAME.test(schema)) {
    throw new ValidationError(
      `Invalid PostgreSQL schema name "${schema}": use letters, digits and underscores (not starting with a digit), at most 63 characters.`,
    );
  }
  const weak = params.get("allowWeakDurability");
  const clock = params.get("clock") ?? options.clock ?? "database";
  if (clock !== "database" && clock !== "caller") throw new ValidationError(`Invalid clock "${clock}" for the PostgreSQL store: use "database" or "caller".`);
  const poolParam = params.get("poolSize");
  if (poolParam !== null && !/^[1-9][0-9]{0,3}$/.test(poolParam)) {
    throw new ValidationError(
      `Invalid poolSize "${poolParam}" on the PostgreSQL store URL: use a whole number of connections from 1 to 9999, e.g. ?poolSize=5.`,
    );
  }
  const userOptions = params.get("options") ?? "";
  for (const name of [...CAIRN_PARAMS, "options"]) params.delete(name);
  const connectionString = parsed.toString();
  parsed.password = "";
  for (const secret of ["password", "sslpassword"]) params.delete(secret);
  params.set("schema", schema);
  return {
    connectionString,
    serverOptions: `${userOptions} -c search_path=${quoteIdent(schema)}`.trim(),
    displayUrl: parsed.toString(),
    schema,
    allowWeakDurability: weak === null ? options.allowWeakDurability === true : weak === "1" || weak === "true",
    clock,
    poolSize: positive(poolParam === null ? options.poolSize : Number(poolParam), 10, "poolSize"),
    connectTimeoutMs: positive(options.connectTimeoutMs, 10_000, "connectTimeoutMs"),
  };
}

/** Quotes an SQL identifier. */
export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/**
 * The LISTEN/NOTIFY channel of a schema's wake-ups, as a quoted identifier: `"cairn_wake_<schema>"`,
 * shortened with a hash when that would pass PostgreSQL's 63-byte identifier limit.
 */
export function wakeChannel(schema: string): string {
  return channel("cairn_wake_", schema);
}

/**
 * The LISTEN/NOTIFY channel of a schema's journal notices (see `Store.onJournal`), as a quoted
 * identifier: `"cairn_journal_<schema>"`, shortened like {@link wakeChannel}'s.
 */
export function journalChannel(schema: string): string {
  return channel("cairn_journal_", schema);
}

/**
 * The LISTEN/NOTIFY channel of a schema's live deltas (see `Store.onLiveDeltas`), as a quoted
 * identifier: `"cairn_live_<schema>"`, shortened like {@link wakeChannel}'s.
 */
export function liveChannel(schema: string): string {
  return channel("cairn_live_", schema);
}

/** A quoted channel identifier's name, as `pg_notify` takes it. */
export function channelName(quoted: string): string {
  return quoted.slice(1, -1).replaceAll('""', '"');
}

function channel(prefix: string, schema: string): string {
  const name = `${prefix}${schema}`;
  if (name.length <= 63) return quoteIdent(name);
  return quoteIdent(`${prefix}${schema.slice(0, 40)}_${createHash("sha256").update(schema).digest("hex").slice(0, 8)}`);
}

function positive(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 1) throw new ValidationError(`${name} must be a positive integer, got ${String(value)}.`);
  return value;
}
