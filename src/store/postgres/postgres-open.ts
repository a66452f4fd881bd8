import pg from "pg";
import { StoreInvalidError } from "../../core/errors.js";
import type { PostgresConfig } from "./postgres-config.js";
import { postgresSchemaVersion } from "./postgres-migrations.js";

const INT8_OID = 20;

// BIGINT (epoch ms, seqs, epochs, inbox ids) as numbers: every value Cairn stores is a safe integer.
// Set per pool, never on pg's global type table, so other users of `pg` in the process are unaffected.
const TYPES = {
  getTypeParser: ((oid: number, format?: "text" | "binary") =>
    oid === INT8_OID ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

/** Connection settings shared by the pool and the LISTEN connection. */
export function clientConfig(config: PostgresConfig): pg.ClientConfig {
  return {
    connectionString: config.connectionString,
    options: config.serverOptions,
    connectionTimeoutMillis: config.connectTimeoutMs,
    keepAlive: true,
    application_name: "cairn",
    types: TYPES,
  };
}

/**
 * The store's pool. Errors of idle connections (server restart, network cut) go to `onError`
 * instead of crashing the process; the pool drops such connections and opens new ones on demand.
 *
 * Every connection also carries an error listener of its own from the moment it connects until it
 * is gone. The pool's idle listener comes off as it hands a connection out, and whoever checked it
 * out can only add theirs once the hand-over's promise settles; a FATAL that arrives in the same
 * read as the ReadyForQuery that freed the connection (pg_terminate_backend just as a statement
 * ends, while another operation waits for the connection) is emitted in between, and an 'error'
 * event without a listener kills the process. The connection is then not queryable, so the one
 * who got it fails its first statement as a lost connection and runs again on another.
 */
export function createPool(config: PostgresConfig, onError: (error: Error) => void): pg.Pool {
  const pool = new pg.Pool({ ...clientConfig(config), max: config.poolSize, idleTimeoutMillis: 30_000 });
  pool.on("error", onError);
  pool.on("connect", (client) => client.on("error", ignoreHandedOver));
  return pool;
}

/** See {@link createPool}: the error also fails the connection's statements, and the pool or its holder reports it. */
function ignoreHandedOver(): void {}

/** The server settings that decide whether a commit survives a crash (`SHOW fsync`, `SHOW synchronous_commit`). */
export interface DurabilitySettings {
  fsync: string;
  synchronousCommit: string;
}

/** Reads {@link DurabilitySettings} as they apply to this connection's session. */
export async function readDurability(client: pg.ClientBase): Promise<DurabilitySettings> {
  const { rows } = await client.query<DurabilitySettings>(
    `SELECT current_setting('fsync') AS fsync, current_setting('synchronous_commit') AS "synchronousCommit"`,
  );
  const row = rows[0];
  if (!row) throw new Error("PostgreSQL returned no settings row.");
  return row;
}

/**
 * Refuses a server that can lose commits Cairn reports durable: `fsync=off` (a crash of the
 * server or its machine can lose or corrupt committed data) or `synchronous_commit=off` (a
 * server crash loses the last commits). Pure, so it is tested without such a server.
 * @throws StoreInvalidError naming the setting, why it matters, and how to allow it.
 */
export function checkDurability(settings: DurabilitySettings, where: string, allowWeakDurability: boolean): void {
  if (allowWeakDurability) return;
  const problems: string[] = [];
  if (settings.fsync.toLowerCase() === "off") problems.push("fsync=off (a crash of the server or its machine can lose or corrupt committed data)");
  if (settings.synchronousCommit.toLowerCase() === "off") {
    problems.push("synchronous_commit=off (a server crash loses the last commits, after Cairn was told they were durable)");
  }
  if (problems.length === 0) return;
  throw new StoreInvalidError(
    `The PostgreSQL server at ${where} runs with ${problems.join(" and ")}. Cairn journals a step before running it and relies on ` +
      "every acknowledged commit surviving a crash, so it refuses this server; nothing was modified. Turn the setting back on " +
      "(ALTER SYSTEM / ALTER ROLE / ALTER DATABASE … SET, or the connection's options), or, for throwaway data only, allow it with " +
      "the option allowWeakDurability: true or ?allowWeakDurability=1 on the store URL.",
  );
}

/**
 * The schema version of the store a `postgres://` URL names (0: no Cairn schema there), read over one
 * short-lived connection without creating or migrating anything. For commands that only read: a
 * mistyped `?schema=` must not leave an empty store behind.
 */
export async function probePostgresSchemaVersion(config: PostgresConfig): Promise<number> {
  const client = new pg.Client(clientConfig(config));
  client.on("error", () => undefined); // a connection lost after the probe's query is of no interest
  await client.connect();
  try {
    return await postgresSchemaVersion(client, config.schema);
  } finally {
    await client.end().catch(() => undefined);
  }
}
