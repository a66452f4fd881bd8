/**
 * Offloaded and encrypted payloads on PostgreSQL: see test/support/payloads-suite.ts.
 * Needs CAIRN_TEST_PG_URL (default postgres://postgres@127.0.0.1:5432/test); under CI=true it must run.
 */
import pg from "pg";
import { describe, it } from "vitest";
import { PG_URL, chaosSchema } from "./chaos/support/pg.js";
import { payloadsSuite } from "./support/payloads-suite.js";

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
  payloadsSuite("postgres", async () => {
    const schema = await chaosSchema();
    const t = (table: string) => `"${schema.name}".${table}`;
    return {
      url: schema.url("cairn_payloads_test"),
      t,
      sql: async (text) => (await schema.query(text)) as never[],
      async dump() {
        const tables = ["runs", "journal", "inbox", "blobs", "human_requests", "journal_text"];
        const parts = await Promise.all(
          tables.map((table) => schema.query<{ text: string | null }>(`SELECT string_agg(x::text, E'\\n') AS text FROM ${t(table)} x`)),
        );
        return parts.map((rows) => rows[0]?.text ?? "").join("\n");
      },
    };
  });
} else {
  describe.skip("postgres payloads (no server at CAIRN_TEST_PG_URL)", () => it("skipped", () => undefined));
}
