import { existsSync } from "node:fs";
import { resolve } from "node:path";
import type { Command } from "commander";
import { UsageError } from "./errors.js";
import { escapeJsonForTerminal, escapeTerminal } from "./terminal-escape.js";
import { loadModuleEngineOptions } from "./load-schedules.js";
import { createEngine } from "../engine/create-engine.js";
import type { Engine } from "../engine/engine.js";
import type { AuditStore, RunStore, TokenStore } from "../core/store.js";
import { recordAudit } from "./audit.js";
import type { Workflow } from "../engine/workflow.js";
import { defaultStoreUrl } from "../store/open-store.js";
import { isPostgresUrl, resolvePostgresConfig } from "../store/postgres/postgres-config.js";
import { probePostgresSchemaVersion } from "../store/postgres/postgres-open.js";

/** Options every command that touches the store takes. */
export interface StoreOptions {
  store: string;
}

/** Options of commands whose output is data. */
export interface JsonOptions {
  json?: boolean;
}

/** Adds `--store <url>` (default: `CAIRN_STORE`, else the local SQLite file). */
export function storeOption(command: Command): Command {
  return command.option("--store <url>", "store URL: sqlite:<path>, postgres://… or memory: (env CAIRN_STORE)", defaultStoreUrl());
}

/** Adds `--json`. */
export function jsonOption(command: Command): Command {
  return command.option("--json", "print machine-readable JSON instead of text");
}

/** How {@link withEngine} treats a SQLite store file that does not exist yet. */
export interface WithEngineOptions {
  /** Create the file (commands that add data: start, import, token create). Default: refuse, naming the path. */
  create?: boolean;
}

/**
 * Refuses a store that does not exist: a `sqlite:` file that is not there, or a `postgres://` schema
 * with no Cairn store in it. A command that only reads or acts on existing runs would otherwise
 * create an empty store at a mistyped path or schema (or in the wrong directory) and report "no runs".
 */
export async function requireExistingStore(url: string): Promise<void> {
  if (isPostgresUrl(url)) {
    const config = resolvePostgresConfig(url);
    if ((await probePostgresSchemaVersion(config)) > 0) return;
    throw new UsageError(
      `No Cairn store in schema "${config.schema}" at ${config.displayUrl}. Check --store (or CAIRN_STORE) and its ?schema= parameter; ` +
        `\`${CLI} migrate --store ${shellQuote(url)}\` creates an empty store, and \`${CLI} worker\`, \`dev\` and \`start\` create one as needed.`,
    );
  }
  const file = sqliteFileOf(url);
  if (file === undefined || existsSync(file)) return;
  throw new UsageError(
    `No Cairn store at ${file}. Check --store (or CAIRN_STORE) and the directory you run from; ` +
      `\`${CLI} migrate --store ${shellQuote(url)}\` creates an empty store, and \`${CLI} worker\`, \`dev\` and \`start\` create one as needed.`,
  );
}

/** The file a `sqlite:` store URL names, resolved; undefined for other stores and in-memory SQLite. */
export function sqliteFileOf(url: string): string | undefined {
  if (!url.startsWith("sqlite:")) return undefined;
  const path = url.slice("sqlite:".length);
  if (path === ":memory:" || path.trim() === "" || path.startsWith("//")) return undefined;
  return resolve(path);
}

/**
 * What a command gets beside the engine: the audit log it records privileged actions in, and the
 * one store slice the security commands manage (API tokens and the audit log). Commands never see
 * the whole store: what the engine offers they ask the engine for.
 */
export interface CommandContext {
  /** Records a privileged action taken through the CLI in the audit log (actor `cli:<OS user>`). */
  audit(action: string, target: string | null, detail?: Record<string, unknown> | null): Promise<void>;
  /** API tokens and the audit log: `cairn token` and `cairn audit`. */
  store: TokenStore & AuditStore;
  /** Run counts by status and entry listings (store aggregates): `cairn top`'s overview. */
  runs: Pick<RunStore, "countRuns" | "listRunEntries">;
}

/** The {@link CommandContext} over a store. */
export function commandContext(store: TokenStore & AuditStore & Pick<RunStore, "countRuns" | "listRunEntries">): CommandContext {
  return { audit: (action, target, detail = null) => recordAudit(store, action, target, detail), store, runs: store };
}

/**
 * Opens an engine on the store, runs `use`, and closes the engine whatever happens.
 * A store that does not exist is refused unless `create` is set (see {@link requireExistingStore}).
 * @example await withEngine(opts, [], (engine) => engine.getRun(runId));
 */
export async function withEngine<T>(
  options: StoreOptions,
  workflows: Workflow<any, any>[],
  use: (engine: Engine, cli: CommandContext) => Promise<T>,
  { create = false }: WithEngineOptions = {},
): Promise<T> {
  if (!create) await requireExistingStore(options.store);
  // The queues the modules declare: createEngine refuses a workflow that joins an undeclared queue.
  const specs = (options as { workflows?: string[] }).workflows;
  const queues = specs && specs.length > 0 ? (await loadModuleEngineOptions(specs)).queues : undefined;
  const engine = await createEngine({ store: options.store, workflows, ...(queues ? { queues } : {}) });
  try {
    return await use(engine, commandContext(engine.store));
  } finally {
    await engine.close();
  }
}

/** Writes lines to stdout, control characters escaped ({@link escapeTerminal}). */
export function print(...lines: string[]): void {
  for (const line of lines) process.stdout.write(`${escapeTerminal(line)}\n`);
}

/** Writes lines to stderr: hints and progress that scripts reading stdout should not see. Escaped as {@link print}. */
export function note(...lines: string[]): void {
  for (const line of lines) process.stderr.write(`${escapeTerminal(line)}\n`);
}

/** Prints a value as indented JSON on stdout; characters a terminal would act on are `\u` escapes. */
export function printJson(value: unknown): void {
  print(escapeJsonForTerminal(JSON.stringify(value, jsonReplacer, 2)));
}

function jsonReplacer(_key: string, value: unknown): unknown {
  if (typeof value === "bigint") return value.toString();
  if (value instanceof Map) return Object.fromEntries(value);
  if (value instanceof Set) return [...value];
  return value;
}

/** How hints spell a call of this CLI (it is a local bin of the project). */
export const CLI = "npx cairn";

/** Quotes a string for a POSIX shell when it needs it. */
export function shellQuote(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}

/** Drops keys whose value is undefined, so library defaults apply. */
export function defined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
