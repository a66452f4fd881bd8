import { resolve } from "node:path";
import type Database from "better-sqlite3";
import { SqliteFlow } from "./sqlite-flow.js";
import { SqliteLiveStatements } from "./sqlite-live-statements.js";
import { CAIRN_APPLICATION_ID, applyMigrations, latestSchemaVersion, schemaVersion } from "./sqlite-migrations.js";
import { openSqliteDatabase, type SqliteStoreOptions } from "./sqlite-open.js";
import { SqliteOutboxStatements } from "./sqlite-outbox-statements.js";
import { SqliteStatements } from "./sqlite-statements.js";

/** The pragmas in effect on a {@link SqliteStore}'s connection, for diagnostics. */
export interface SqliteSettings {
  journalMode: string;
  synchronous: "OFF" | "NORMAL" | "FULL" | "EXTRA";
  busyTimeoutMs: number;
  foreignKeys: boolean;
  applicationId: number;
  schemaVersion: number;
}

const SYNCHRONOUS = ["OFF", "NORMAL", "FULL", "EXTRA"] as const;

/**
 * The connection part of a {@link SqliteStore}, which every entity module of the store shares: the
 * database file, its BEGIN IMMEDIATE transactions, migrations, and the prepared statements, which
 * are prepared only once the schema is known to be current ({@link SqliteConnection.q}).
 */
export class SqliteConnection {
  /** `sqlite:<absolute path>` or `sqlite::memory:`. */
  readonly url: string;
  readonly db: Database.Database;
  private prepared: SqliteStatements | undefined;
  private flowStatements: SqliteFlow | undefined;
  private liveStatements: SqliteLiveStatements | undefined;
  private outboxStatements: SqliteOutboxStatements | undefined;
  private readonly transaction: Database.Transaction<(fn: () => unknown) => unknown>;

  /** Opens (creating if needed) the database at `path` (`":memory:"` for a private in-memory one). */
  constructor(path: string, options: SqliteStoreOptions) {
    const file = path === ":memory:" ? path : resolve(path);
    this.db = openSqliteDatabase(file, options);
    this.url = `sqlite:${file}`;
    this.transaction = this.db.transaction((fn: () => unknown) => fn());
  }

  /** See {@link Store.migrate}. */
  async migrate(): Promise<void> {
    applyMigrations(this.db);
    this.prepared = undefined;
    this.outboxStatements = undefined;
  }

  /** See {@link Store.close}. */
  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }

  /** See {@link SqliteStore.settings}. */
  settings(): SqliteSettings {
    const pragma = (name: string): unknown => this.db.pragma(name, { simple: true });
    return {
      journalMode: String(pragma("journal_mode")),
      synchronous: SYNCHRONOUS[Number(pragma("synchronous"))] ?? "FULL",
      busyTimeoutMs: Number(pragma("busy_timeout")),
      foreignKeys: pragma("foreign_keys") === 1,
      applicationId: Number(pragma("application_id")),
      schemaVersion: schemaVersion(this.db),
    };
  }

  /** Runs `fn` in one BEGIN IMMEDIATE transaction (nested calls join the outer one). */
  immediate<T>(fn: () => T): T {
    return this.transaction.immediate(fn) as T;
  }

  /** The prepared statements; the first use checks that the schema is current, so a store that was never migrated says so. */
  get q(): SqliteStatements {
    if (!this.prepared) {
      const found = schemaVersion(this.db);
      if (found !== latestSchemaVersion() || this.db.pragma("application_id", { simple: true }) !== CAIRN_APPLICATION_ID) {
        throw new Error(`The store ${this.url} has schema version ${found}, not ${latestSchemaVersion()}: call migrate() before using it (openStore does).`);
      }
      this.prepared = new SqliteStatements(this.db);
    }
    return this.prepared;
  }

  /** Flow-control statements, prepared on first use (never on the unqueued paths). */
  get flow(): SqliteFlow {
    return (this.flowStatements ??= new SqliteFlow(this.db));
  }

  /** Tags, values and deadlines statements, prepared on first use. */
  get live(): SqliteLiveStatements {
    // Reading `q` first checks the schema version, so a store that was never migrated says so.
    if (!this.liveStatements && this.q) this.liveStatements = new SqliteLiveStatements(this.db);
    return this.liveStatements!;
  }

  /** Outbox statements, prepared on first use. */
  get outbox(): SqliteOutboxStatements {
    if (!this.outboxStatements) {
      void this.q; // checks the schema version first
      this.outboxStatements = new SqliteOutboxStatements(this.db);
    }
    return this.outboxStatements;
  }
}
