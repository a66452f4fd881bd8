import type { Command } from "commander";
import { openStore } from "../../store/open-store.js";
import { SqliteStore } from "../../store/sqlite/sqlite-store.js";
import { CLI, jsonOption, print, printJson, storeOption, type JsonOptions, type StoreOptions } from "../context.js";

/** Registers `cairn migrate`. */
export function registerMigrateCommand(program: Command): void {
  const migrate = program.command("migrate").description("create or upgrade the store's schema (safe to run again)");
  storeOption(jsonOption(migrate)).action(migrateStore);
}

async function migrateStore(options: StoreOptions & JsonOptions): Promise<void> {
  const store = await openStore(options.store);
  try {
    await store.migrate();
    const settings = store instanceof SqliteStore ? store.settings() : undefined;
    const { runs } = await store.listRuns({ limit: 1 });
    const state = {
      store: store.url,
      schemaVersion: settings?.schemaVersion ?? null,
      journalMode: settings?.journalMode ?? null,
      synchronous: settings?.synchronous ?? null,
      empty: runs.length === 0,
    };
    if (options.json) return printJson(state);
    print(
      `Store ${store.url} is up to date.`,
      ...(settings
        ? [`  schema version  ${settings.schemaVersion}`, `  journal mode    ${settings.journalMode}`, `  synchronous     ${settings.synchronous}`]
        : []),
      `  runs            ${state.empty ? "none yet" : `some (list them with: ${CLI} runs)`}`,
    );
  } finally {
    await store.close();
  }
}
