import { randomBytes } from "node:crypto";
import pg from "pg";
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

/** A store URL on a fresh schema of the test server, dropped after the test (after the engines on it close). */
export function freshPgUrl(): string {
  const schema = `cairn_test_${randomBytes(6).toString("hex")}`;
  const url = new URL(PG_URL);
  url.searchParams.set("schema", schema);
  onCleanup(async () => {
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).finally(() => client.end());
  });
  return url.toString();
}
