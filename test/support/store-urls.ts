import { randomBytes } from "node:crypto";
import { join } from "node:path";
import pg from "pg";
import { onCleanup, tempDir } from "./engines.js";

/** The durable stores engine-level feature tests run on: real SQLite files and real PostgreSQL schemas. */
export const DURABLE_STORES = ["sqlite", "postgres"] as const;
export type DurableStore = (typeof DURABLE_STORES)[number];

const PG_URL = process.env.CAIRN_TEST_PG_URL || "postgres://postgres@127.0.0.1:5432/test";

function inCi(): boolean {
  const ci = process.env.CI;
  return ci !== undefined && ci !== "" && ci !== "false" && ci !== "0";
}

/** True when the test PostgreSQL answers; under CI=true an unreachable server throws (PG tests must run there). */
export async function postgresReachable(): Promise<boolean> {
  const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.end();
    return true;
  } catch (error) {
    await client.end().catch(() => undefined);
    if (inCi()) throw new Error(`PostgreSQL is required under CI=true but ${PG_URL} is unreachable: ${(error as Error).message}`);
    console.warn(`Skipping PostgreSQL cases: ${PG_URL} is unreachable (${(error as Error).message}). Set CAIRN_TEST_PG_URL to run them.`);
    return false;
  }
}

/**
 * A store URL isolated to this test: a fresh SQLite file, or a fresh PostgreSQL schema dropped
 * after the test (weak durability allowed, since test servers often run with fsync off).
 */
export function durableStoreUrl(kind: DurableStore): string {
  if (kind === "sqlite") return `sqlite:${join(tempDir(), "cairn.db")}`;
  const schema = `cairn_test_${randomBytes(6).toString("hex")}`;
  const url = new URL(PG_URL);
  url.searchParams.set("schema", schema);
  url.searchParams.set("allowWeakDurability", "1");
  onCleanup(async () => {
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).finally(() => client.end());
  });
  return url.toString();
}
