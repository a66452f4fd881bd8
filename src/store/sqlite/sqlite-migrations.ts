import type Database from "better-sqlite3";
import { SchemaTooNewError } from "../../core/errors.js";
import { loadMigrations, type Migration } from "../common/migration-files.js";

export type { Migration } from "../common/migration-files.js";

/** The `PRAGMA application_id` of every Cairn SQLite file: "CARN" in ASCII. */
export const CAIRN_APPLICATION_ID = 0x4341524e;

let cached: Migration[] | undefined;

/** The bundled SQLite migrations (`src/store/migrations/sqlite/`), in version order. Versions are 1, 2, … with no gaps. */
export function sqliteMigrations(): Migration[] {
  cached ??= loadMigrations(new URL("../migrations/sqlite/", import.meta.url), "SQLite");
  return cached;
}

/** The newest schema version this build of Cairn knows. */
export function latestSchemaVersion(): number {
  return sqliteMigrations().length;
}

/** The schema version recorded in an open database, 0 when it has none. */
export function schemaVersion(db: Database.Database): number {
  const table = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'cairn_migrations'").get();
  if (!table) return 0;
  const row = db.prepare("SELECT MAX(version) AS version FROM cairn_migrations").get() as { version: number | null };
  return row.version ?? 0;
}

/**
 * Applies the migrations the database lacks, in one BEGIN IMMEDIATE transaction:
 * concurrent migrators serialise on the write lock and the later ones find nothing to do.
 * @throws SchemaTooNewError when the database is newer than this build.
 */
export function applyMigrations(db: Database.Database): void {
  const migrations = sqliteMigrations();
  const known = migrations.length;
  const current = schemaVersion(db);
  if (current > known) throw new SchemaTooNewError(current, known);
  if (current === known && db.pragma("application_id", { simple: true }) === CAIRN_APPLICATION_ID) return;
  // Foreign keys are off while migrating (the pragma is a no-op inside a transaction), so a
  // migration may rebuild a table the documented way; foreign_key_check runs before the commit.
  const foreignKeys = db.pragma("foreign_keys", { simple: true }) === 1;
  if (foreignKeys) db.pragma("foreign_keys = OFF");
  try {
    migrate(db, migrations, known);
  } finally {
    if (foreignKeys) db.pragma("foreign_keys = ON");
  }
}

function migrate(db: Database.Database, migrations: readonly Migration[], known: number): void {
  db.transaction(() => {
    db.exec("CREATE TABLE IF NOT EXISTS cairn_migrations (version INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)");
    const applied = schemaVersion(db);
    if (applied > known) throw new SchemaTooNewError(applied, known);
    const record = db.prepare("INSERT INTO cairn_migrations (version, name, applied_at) VALUES (?, ?, ?)");
    for (const migration of migrations) {
      if (migration.version <= applied) continue;
      db.exec(migration.sql);
      record.run(migration.version, migration.name, Date.now());
    }
    const broken = db.pragma("foreign_key_check") as unknown[];
    if (broken.length > 0) throw new Error(`A migration left ${broken.length} rows whose foreign keys point nowhere; nothing was changed.`);
    db.pragma(`application_id = ${CAIRN_APPLICATION_ID}`);
  }).immediate();
}
