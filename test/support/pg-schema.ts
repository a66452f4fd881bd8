import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll } from "vitest";
import { latestPostgresVersion } from "../../src/store/postgres/postgres-migrations.js";
import { onCleanup } from "./cleanups.js";

/** The test server: CAIRN_TEST_PG_URL, default postgres://postgres@127.0.0.1:5432/test. */
export const PG_URL = process.env.CAIRN_TEST_PG_URL || "postgres://postgres@127.0.0.1:5432/test";

function inCi(): boolean {
  const ci = process.env.CI;
  return ci !== undefined && ci !== "" && ci !== "false" && ci !== "0";
}

/** True when the server answers; under CI=true an unreachable server throws (the suite must run there). */
export async function pgReachable(): Promise<boolean> {
  const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.end();
    return true;
  } catch (error) {
    await client.end().catch(() => undefined);
    if (inCi()) throw new Error(`PostgreSQL is required under CI=true but ${PG_URL} is unreachable: ${(error as Error).message}`);
    console.warn(`Skipping PostgreSQL tests: ${PG_URL} is unreachable (${(error as Error).message}). Set CAIRN_TEST_PG_URL to run them.`);
    return false;
  }
}

/**
 * A store URL on a fresh schema of the test server, for this test only (after the engines on it close).
 *
 * With `recycle` (tests whose engines all run in this process), the schema is emptied after the test
 * and handed to the next test of the file instead of being dropped: migrating a new schema costs
 * 0.3–0.9 s of DDL on this server, emptying one a few milliseconds. A schema whose tables or
 * migrations the test changed is dropped instead; the file's spare schemas are dropped after it.
 */
export function freshPgUrl(options: { recycle?: boolean } = {}): string {
  const schema = (options.recycle ? spare.pop() : undefined) ?? `cairn_test_${randomBytes(6).toString("hex")}`;
  const url = new URL(PG_URL);
  url.searchParams.set("schema", schema);
  onCleanup(async () => {
    if (options.recycle && (await emptied(schema))) spare.push(schema);
    else await dropSchemas([schema]);
  });
  return url.toString();
}

/** Emptied schemas at the latest version, ready for this file's next test. */
const spare: string[] = [];
afterAll(async () => {
  await dropSchemas(spare.splice(0));
});

/** The tables of a freshly migrated schema, learned from the first schema emptied. */
let expectedTables: string | undefined;

async function dropSchemas(schemas: string[]): Promise<void> {
  if (schemas.length === 0) return;
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    for (const schema of schemas) await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await client.end();
  }
}

/**
 * Deletes every row of `schema` but its migration records and restarts its sequences, in one
 * transaction with triggers off. False (nothing changed) when the schema is not exactly a current
 * Cairn schema with the tables the first one had, or when the server refuses (not a superuser).
 */
async function emptied(schema: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    const tables = (await client.query<{ name: string }>("SELECT tablename AS name FROM pg_tables WHERE schemaname = $1 ORDER BY 1", [schema])).rows.map(
      (row) => row.name,
    );
    if (!tables.includes("cairn_migrations")) return false;
    const versions = await client.query<{ n: string; top: number }>(`SELECT COUNT(*) AS n, MAX(version) AS top FROM "${schema}".cairn_migrations`);
    if (Number(versions.rows[0]?.n) !== latestPostgresVersion() || versions.rows[0]?.top !== latestPostgresVersion()) return false;
    const shape = tables.join(",");
    if (expectedTables !== undefined && shape !== expectedTables) return false;
    const sequences = (await client.query<{ name: string }>("SELECT sequencename AS name FROM pg_sequences WHERE schemaname = $1", [schema])).rows.map(
      (row) => row.name,
    );
    const statements = [
      "BEGIN",
      "SET LOCAL session_replication_role = replica",
      ...tables.filter((table) => table !== "cairn_migrations").map((table) => `DELETE FROM "${schema}"."${table}"`),
      ...sequences.map((sequence) => `ALTER SEQUENCE "${schema}"."${sequence}" RESTART`),
      "COMMIT",
    ];
    await client.query(statements.join(";\n"));
    expectedTables ??= shape;
    return true;
  } catch {
    await client.query("ROLLBACK").catch(() => undefined);
    return false;
  } finally {
    await client.end();
  }
}
