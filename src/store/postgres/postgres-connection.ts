import type pg from "pg";
import {
  channelName,
  journalChannel,
  liveChannel,
  resolvePostgresConfig,
  wakeChannel,
  type PostgresConfig,
  type PostgresStoreOptions,
} from "./postgres-config.js";
import { JournalNotices } from "./postgres-journal-notices.js";
import { applyPostgresMigrations, latestPostgresVersion, postgresSchemaVersion } from "./postgres-migrations.js";
import { checkDurability, clientConfig, createPool, readDurability } from "./postgres-open.js";
import { DB_NOW, type Sql } from "./postgres-queries.js";
import { PgRunner, type Tx } from "./postgres-tx.js";
import { WakeListener } from "./postgres-wake.js";

/** Most commit transactions an engine keeps in flight on one PostgreSQL store (see {@link PostgresStore.commitWriters}). */
export const MAX_COMMIT_WRITERS = 4;

/** What a {@link PostgresStore} runs on, for diagnostics (`cairn migrate`, health checks). */
export interface PostgresSettings {
  schema: string;
  /** The schema's version, 0 before migrate(). */
  schemaVersion: number;
  clock: "database" | "caller";
  /** `SHOW fsync` and `SHOW synchronous_commit` as this store's connections see them. */
  fsync: string;
  synchronousCommit: string;
  allowWeakDurability: boolean;
  /** `SHOW server_version`. */
  serverVersion: string;
}

/**
 * The connection part of a {@link PostgresStore}, which every entity module of the store shares:
 * the pool and its runner, the LISTEN connections (wake-ups, journal and live notices), opening
 * (durability check, migrations) and closing, and {@link PostgresConnection.query} /
 * {@link PostgresConnection.tx}, which check once that the schema is current before the first statement.
 */
export class PostgresConnection {
  /** The URL without password, with its schema. */
  readonly url: string;
  readonly config: PostgresConfig;
  readonly runner: PgRunner;
  /** See {@link PostgresStore.commitWriters}. */
  readonly commitWriters: number;
  readonly wakes: WakeListener;
  readonly journalNotices: JournalNotices;
  /** The live channel's listener (its own connection, opened on the first subscription). */
  readonly liveNotices: WakeListener;
  private readonly pool: pg.Pool;
  private ready: Promise<void> | undefined;
  private closing: Promise<void> | undefined;

  /** Creates the pool (connections open on first use). */
  constructor(url: string, options: PostgresStoreOptions) {
    this.config = resolvePostgresConfig(url, options);
    this.url = this.config.displayUrl;
    const onError = options.onConnectionError ?? (() => undefined);
    this.pool = createPool(this.config, onError);
    this.commitWriters = Math.max(1, Math.min(MAX_COMMIT_WRITERS, Math.floor(this.config.poolSize / 2)));
    const channel = wakeChannel(this.config.schema);
    const journal = journalChannel(this.config.schema);
    this.runner = new PgRunner(this.pool, this.config.clock, channel, { channel: journal, listened: (runIds) => this.journalNotices.listened(runIds) });
    this.wakes = new WakeListener(clientConfig(this.config), channel, onError);
    this.journalNotices = new JournalNotices(
      (statement, values) => this.runner.query(statement, values),
      new WakeListener(clientConfig(this.config), journal, onError, "cairn:journal"),
      this.wakes,
      channelName(channel),
      onError,
    );
    this.liveNotices = new WakeListener(clientConfig(this.config), liveChannel(this.config.schema), onError, "cairn:live");
  }

  /** See {@link PostgresStore.migrate}. */
  async migrate(): Promise<void> {
    await this.runner.withClient(async (client) => {
      checkDurability(await readDurability(client), this.url, this.config.allowWeakDurability);
      await applyPostgresMigrations(client, this.config.schema, this.url);
    });
    this.ready = Promise.resolve();
  }

  /** See {@link PostgresStore.settings}. */
  async settings(): Promise<PostgresSettings> {
    return this.runner.withClient(async (client) => {
      const durability = await readDurability(client);
      const { rows } = await client.query<{ version: string }>("SELECT current_setting('server_version') AS version");
      return {
        schema: this.config.schema,
        schemaVersion: await postgresSchemaVersion(client, this.config.schema),
        clock: this.config.clock,
        ...durability,
        allowWeakDurability: this.config.allowWeakDurability,
        serverVersion: rows[0]?.version ?? "unknown",
      };
    });
  }

  /** Ends the LISTEN connections and the pool. Idempotent. */
  async close(): Promise<void> {
    this.closing ??= (async () => {
      await this.journalNotices.close();
      await this.liveNotices.close();
      await this.wakes.close();
      await this.pool.end();
    })();
    await this.closing;
  }

  /** The database clock, epoch ms. */
  async dbNow(): Promise<number> {
    const [row] = await this.query<{ now: number }>(`SELECT ${DB_NOW} AS now`);
    if (!row) throw new Error("PostgreSQL did not return the clock.");
    return row.now;
  }

  /** Runs one statement outside a transaction. */
  async query<R extends pg.QueryResultRow>(statement: Sql | string, values: readonly unknown[] = []): Promise<R[]> {
    await this.ensureReady();
    return this.runner.query<R>(statement, values);
  }

  /** Runs `fn` in one transaction at the caller's `now` (or the database clock). */
  async tx<T>(now: number, fn: (tx: Tx) => Promise<T>): Promise<T> {
    await this.ensureReady();
    return this.runner.transaction(now, fn);
  }

  /**
   * Before the first operation of a store that was not migrated by this instance: the same
   * durability check as migrate(), and the schema must be current. Retried after a failure.
   */
  async ensureReady(): Promise<void> {
    this.ready ??= this.runner
      .withClient(async (client) => {
        checkDurability(await readDurability(client), this.url, this.config.allowWeakDurability);
        const found = await postgresSchemaVersion(client, this.config.schema);
        if (found !== latestPostgresVersion()) {
          throw new Error(
            `The store ${this.url} has schema version ${found}, not ${latestPostgresVersion()}: call migrate() before using it (openStore does).`,
          );
        }
      })
      .catch((error: unknown) => {
        this.ready = undefined;
        throw error;
      });
    await this.ready;
  }
}
