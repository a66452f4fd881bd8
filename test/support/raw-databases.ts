/** Fresh real databases with raw access behind the engine's back, for the payload suites (SQLite file, PostgreSQL schema). */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { chaosSchema } from "../chaos/support/pg.js";
import { onCleanup, tempDir } from "./engines.js";
import type { RawDatabase } from "./payloads-suite.js";

/** A fresh SQLite file; `dump()` is its bytes (and its WAL's), so a plaintext search sees everything on disk. */
export async function rawSqlite(): Promise<RawDatabase> {
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
}

/** A fresh PostgreSQL schema, dropped after the test; `dump()` is every payload-bearing table as text. */
export async function rawPostgres(): Promise<RawDatabase> {
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
}
