import type { Command } from "commander";
import { existsSync } from "node:fs";
import Database from "better-sqlite3";
import { openStore } from "../../store/open-store.js";
import { isPostgresUrl, resolvePostgresConfig } from "../../store/postgres/postgres-config.js";
import { probePostgresSchemaVersion } from "../../store/postgres/postgres-open.js";
import { PostgresStore } from "../../store/postgres/postgres-store.js";
import { schemaVersion } from "../../store/sqlite/sqlite-migrations.js";
import { SqliteStore } from "../../store/sqlite/sqlite-store.js";
import { CLI, jsonOption, print, printJson, sqliteFileOf, storeOption, type JsonOptions, type StoreOptions } from "../context.js";

/** Registers `cairn migrate`. */
export function registerMigrateCommand(program: Command): void {
  const migrate = program.command("migrate").description("create or upgrade the store's schema (safe to run again)");
  storeOption(jsonOption(migrate)).action(migrateStore);
}

async function migrateStore(options: StoreOptions & JsonOptions): Promise<void> {
  const before = await versionBefore(options.store);
  const store = await openStore(options.store);
  try {
    await store.migrate();
    const settings = store instanceof SqliteStore ? store.settings() : undefined;
    const after = settings?.schemaVersion ?? (store instanceof PostgresStore ? (await store.settings()).schemaVersion : null);
    const { runs } = await store.listRuns({ limit: 1 });
    const state = {
      store: store.url,
      schemaVersion: after,
      previousSchemaVersion: before,
      journalMode: settings?.journalMode ?? null,
      synchronous: settings?.synchronous ?? null,
      empty: runs.length === 0,
    };
    if (options.json) return printJson(state);
    const done =
      before === null || after === null || before === after
        ? "is up to date"
        : before === 0
          ? `was created (${after} migrations applied)`
          : `was upgraded from schema version ${before} to ${after}`;
    print(
      `Store ${store.url} ${done}.`,
      ...(after === null ? [] : [`  schema version  ${after}`]),
      ...(settings ? [`  journal mode    ${settings.journalMode}`, `  synchronous     ${settings.synchronous}`] : []),
      `  runs            ${state.empty ? "none yet" : `some (list them with: ${CLI} runs)`}`,
    );
  } finally {
    await store.close();
  }
}

/** The store's schema version before migrating (0: no store yet; null: not known, e.g. memory:). */
async function versionBefore(url: string): Promise<number | null> {
  if (isPostgresUrl(url)) return probePostgresSchemaVersion(resolvePostgresConfig(url));
  const file = sqliteFileOf(url);
  if (file === undefined) return null;
  if (!existsSync(file)) return 0;
  let db: Database.Database | undefined;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true });
    return schemaVersion(db);
  } catch {
    return null; // not a database, or not readable: opening the store says what is wrong
  } finally {
    db?.close();
  }
}
