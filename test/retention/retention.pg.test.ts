import { randomBytes } from "node:crypto";
import pg from "pg";
import { onCleanup } from "../support/engines.js";
import { retentionSuite } from "./retention-suite.js";

// Needs PostgreSQL: CAIRN_TEST_PG_URL, default postgres://postgres@127.0.0.1:5432/test (never skipped).
const PG_URL = process.env.CAIRN_TEST_PG_URL || "postgres://postgres@127.0.0.1:5432/test";

retentionSuite("postgres", async () => {
  const schema = `cairn_retention_${randomBytes(5).toString("hex")}`;
  const admin = new pg.Pool({ connectionString: PG_URL, max: 1 });
  onCleanup(async () => {
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await admin.end();
  });
  const url = new URL(PG_URL);
  url.searchParams.set("schema", schema);
  url.searchParams.set("clock", "caller");
  return {
    url: url.toString(),
    async count(table, runId) {
      const { rows } = await admin.query<{ n: string }>(`SELECT COUNT(*) AS n FROM "${schema}".${table} WHERE run_id = $1`, [runId]);
      return Number(rows[0]?.n ?? 0);
    },
  };
});
