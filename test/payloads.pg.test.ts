/**
 * Offloaded and encrypted payloads on PostgreSQL: see test/support/payloads-suite.ts.
 * Needs CAIRN_TEST_PG_URL (default postgres://postgres@127.0.0.1:5432/test); under CI=true it must run.
 */
import pg from "pg";
import { describe, it } from "vitest";
import { PG_URL } from "./chaos/support/pg.js";
import { payloadsSuite } from "./support/payloads-suite.js";
import { rawPostgres } from "./support/raw-databases.js";

const ci = !["", "0", "false", undefined].includes(process.env.CI);
const probe = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 3000 });
const available = await probe.connect().then(
  () => true,
  (error: Error) => {
    if (ci) throw new Error(`PostgreSQL is required under CI=true but ${PG_URL} is unreachable: ${error.message}`);
    console.warn(`Skipping the PostgreSQL payload tests: ${PG_URL} is unreachable (${error.message}).`);
    return false;
  },
);
await probe.end().catch(() => undefined);

if (available) {
  payloadsSuite("postgres", rawPostgres);
} else {
  describe.skip("postgres payloads (no server at CAIRN_TEST_PG_URL)", () => it("skipped", () => undefined));
}
