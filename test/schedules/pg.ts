import { randomBytes } from "node:crypto";
import pg from "pg";
import { onCleanup } from "../support/engines.js";

/** The test server: CAIRN_TEST_PG_URL, default postgres://postgres@127.0.0.1:5432/test. */
export const PG_URL = process.env.CAIRN_TEST_PG_URL || "postgres://postgres@127.0.0.1:5432/test";

/** True when the server answers; under CI=true an unreachable server fails instead (PG tests must run there). */
export async function pgReachable(): Promise<boolean> {
  const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    return true;
  } catch (error) {
    const ci = process.env.CI;
    if (ci !== undefined && ci !== "" && ci !== "false" && ci !== "0")
      throw new Error(`PostgreSQL is required under CI=true but ${PG_URL} is unreachable: ${(error as Error).message}`);
    console.warn(`Skipping PostgreSQL schedule tests: ${PG_URL} is unreachable. Set CAIRN_TEST_PG_URL to run them.`);
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** A store URL on a fresh schema, dropped after the test. */
export function pgSchemaUrl(params: Record<string, string> = {}): string {
  const schema = `cairn_sched_${randomBytes(5).toString("hex")}`;
  onCleanup(async () => {
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    try {
      await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    } finally {
      await client.end();
    }
  });
  const url = new URL(PG_URL);
  url.searchParams.set("schema", schema);
  url.searchParams.set("allowWeakDurability", "1");
  for (const [key, value] of Object.entries(params)) url.searchParams.set(key, value);
  return url.toString();
}
