import { join } from "node:path";
import Database from "better-sqlite3";
import { onCleanup, tempDir } from "../support/engines.js";
import { retentionSuite } from "./retention-suite.js";

retentionSuite("sqlite", async () => {
  const file = join(tempDir(), "cairn.db");
  let db: Database.Database | undefined;
  onCleanup(() => void db?.close());
  return {
    url: `sqlite:${file}`,
    async count(table, runId) {
      db ??= new Database(file, { readonly: true });
      return (db.prepare(`SELECT COUNT(*) AS n FROM ${table} WHERE run_id = ?`).get(runId) as { n: number }).n;
    },
  };
});
