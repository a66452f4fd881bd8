import type pg from "pg";
import { SchemaTooNewError, StoreInvalidError } from "../../core/errors.js";
import { loadMigrations, type Migration } from "../common/migration-files.js";
import { quoteIdent } from "./postgres-config.js";
import { DB_NOW } from "./postgres-queries.js";

/** First key of the migration advisory lock: "CARN" in ASCII; the second is the schema's hash. */
const LOCK_KEY = 0x4341524e;

let cached: Migration[] | undefined;

/** The bundled PostgreSQL migrations (`src/store/migrations/postgres/`), in version order. */
export function postgresMigrations(): Migration[] {
  cached ??= loadMigrations(new URL("../migrations/postgres/", import.meta.url), "PostgreSQL");
  return cached;
}

/** The newest PostgreSQL schema version this build of Cairn knows. */
export function latestPostgresVersion(): number {
  return postgresMigrations().length;
}

/** The schema version recorded in `schema`, 0 when it has no `cairn_migrations` table (or does not exist). */
export async function postgresSchemaVersion(client: pg.ClientBase, schema: string): Promise<number> {
  const table = `${quoteIdent(schema)}.cairn_migrations`;
  const { rows } = await client.query<{ present: boolean }>("SELECT to_regclass($1) IS NOT NULL AS present", [table]);
  if (!rows[0]?.present) return 0;
  const version = await client.query<{ version: number | null }>(`SELECT MAX(version) AS version FROM ${table}`);
  return version.rows[0]?.version ?? 0;
}

/**
 * Creates `schema` if needed and applies the migrations it lacks, in one transaction under a
 * transaction-scoped advisory lock: processes that start together serialise here, and the later
 * ones find nothing to do. A schema that is already current costs one read and takes no lock.
 * @throws SchemaTooNewError when the schema is newer than this build (nothing is changed).
 * @throws StoreInvalidError when the schema holds tables but is not a Cairn schema.
 */
export async function applyPostgresMigrations(client: pg.ClientBase, schema: string, where: string): Promise<void> {
  const migrations = postgresMigrations();
  const known = migrations.length;
  const current = await postgresSchemaVersion(client, schema);
  if (current > known) throw new SchemaTooNewError(current, known);
  if (current === known) return;
  await client.query("BEGIN");
  try {
    await client.query("SELECT pg_advisory_xact_lock($1, hashtext($2))", [LOCK_KEY, schema]);
    const exists = await client.query("SELECT 1 FROM pg_namespace WHERE nspname = $1", [schema]);
    // Checked first: CREATE SCHEMA IF NOT EXISTS needs CREATE on the database even when the schema exists.
    if (exists.rowCount === 0) await client.query(`CREATE SCHEMA ${quoteIdent(schema)}`);
    await client.query(`SET LOCAL search_path TO ${quoteIdent(schema)}`);
    const applied = await postgresSchemaVersion(client, schema);
    if (applied > known) throw new SchemaTooNewError(applied, known);
    if (applied === 0) {
      await refuseForeignSchema(client, schema, where);
      await client.query("CREATE TABLE cairn_migrations (version INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)");
    }
    for (const migration of migrations) {
      if (migration.version <= applied) continue;
      await client.query(migration.sql);
      await client.query(`INSERT INTO cairn_migrations (version, name, applied_at) VALUES ($1, $2, ${DB_NOW})`, [migration.version, migration.name]);
    }
    await client.query("COMMIT");
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw error;
  }
}

async function refuseForeignSchema(client: pg.ClientBase, schema: string, where: string): Promise<void> {
  const { rows } = await client.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = $1 AND c.relkind IN ('r', 'p', 'v', 'm', 'f') ORDER BY c.relname LIMIT 6`,
    [schema],
  );
  if (rows.length === 0) return;
  const names = rows.slice(0, 5).map((row) => row.name);
  throw new StoreInvalidError(
    `The schema "${schema}" at ${where} holds tables (${names.join(", ")}${rows.length > 5 ? ", …" : ""}) but no cairn_migrations table, so it is not a Cairn store. ` +
      "It was not modified. Choose another schema with ?schema=<name> on the store URL, or an empty one.",
  );
}
