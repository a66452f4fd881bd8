// A plain SQLite connection opened exactly as the store opens its file
// (src/store/sqlite/sqlite-open.ts): busy_timeout, WAL, synchronous=FULL, foreign keys.
import { rootRequire } from "./root-deps.mjs";

const Database = rootRequire("better-sqlite3");

export const PAYLOAD = JSON.stringify({ result: 1, attempt: 1 });

/** Opens `file` with the store's pragmas and creates `table (id, run_id, seq, payload)`. */
export function openRawSqlite(file, table) {
  const db = new Database(file, { timeout: 10_000 });
  db.pragma("busy_timeout = 10000");
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = FULL");
  db.pragma("foreign_keys = ON");
  db.exec(`CREATE TABLE IF NOT EXISTS ${table} (id INTEGER PRIMARY KEY, run_id TEXT NOT NULL, seq INTEGER NOT NULL, payload TEXT NOT NULL)`);
  return db;
}
