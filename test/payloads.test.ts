/** Offloaded and encrypted payloads on SQLite: see test/support/payloads-suite.ts. */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { onCleanup, tempDir } from "./support/engines.js";
import { payloadsSuite } from "./support/payloads-suite.js";

payloadsSuite("sqlite", async () => {
  const path = join(tempDir(), "cairn.db");
  let db: Database.Database | undefined;
  const raw = () => {
    if (!db) {
      const opened = new Database(path);
      opened.pragma("busy_timeout = 5000");
      onCleanup(() => void opened.close());
      db = opened;
    }
    return db;
  };
  return {
    url: `sqlite:${path}`,
    t: (table) => table,
    async sql(text) {
      const statement = raw().prepare(text);
      if (statement.reader) return statement.all() as never[];
      statement.run();
      return [];
    },
    async dump() {
      return [path, `${path}-wal`]
        .filter((file) => existsSync(file))
        .map((file) => readFileSync(file).toString("latin1"))
        .join("\n");
    },
  };
});
