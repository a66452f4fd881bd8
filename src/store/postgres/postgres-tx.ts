import pg from "pg";
import { channelName } from "./postgres-config.js";
import { DB_NOW, type Sql } from "./postgres-queries.js";

/** One open transaction, as the store's operations see it. */
export interface Tx {
  /** The transaction's time: the caller's `now`, or the database clock read when it began. */
  readonly now: number;
  /** Runs one statement; named {@link Sql} statements are prepared once per connection. */
  query<R extends pg.QueryResultRow>(statement: Sql | string, values?: readonly unknown[]): Promise<R[]>;
  /** Sends the schema's wake-up NOTIFY as the transaction commits (so listeners never see uncommitted runs). */
  wake(): void;
  /**
   * Records that the transaction appends journal entries of these runs: as it commits, one NOTIFY
   * on the schema's journal channel names those of them someone listens to (the runner's
   * {@link JournalNotices} says which); none is sent when no one listens to any of them.
   */
  journaled(runIds: Iterable<string>): void;
}

/** Where and for which runs a runner announces journal growth (see {@link Tx.journaled}). */
export interface JournalNotices {
  /** The quoted channel identifier, e.g. `"cairn_journal_cairn"`. */
  channel: string;
  /**
   * Asked as each transaction that appended entries commits, with the runs it appended to: the
   * ones someone listens to, to name in the NOTIFY. None skips the NOTIFY.
   */
  listened(runIds: ReadonlySet<string>): string[];
}

/**
 * Longest NOTIFY payload PostgreSQL accepts is 7999 bytes; a transaction whose run ids do not fit
 * sends {@link MANY_RUNS} instead.
 */
const MAX_PAYLOAD_BYTES = 7999;
/** The journal notice payload meaning "any run's journal may have grown". */
export const MANY_RUNS = "*";

/** A journal notice's payload: the run ids as a JSON array, or {@link MANY_RUNS} when that is too long. */
export function journalPayload(runIds: readonly string[]): string {
  const payload = JSON.stringify(runIds);
  return Buffer.byteLength(payload, "utf8") > MAX_PAYLOAD_BYTES ? MANY_RUNS : payload;
}

/** The run ids of a journal notice's payload, or undefined for "any run" (MANY_RUNS, or a payload it cannot read). */
export function parseJournalPayload(payload: string | undefined): string[] | undefined {
  if (payload === undefined || payload === MANY_RUNS) return undefined;
  try {
    const ids: unknown = JSON.parse(payload);
    return Array.isArray(ids) && ids.every((id) => typeof id === "string") ? ids : undefined;
  } catch {
    return undefined;
  }
}

/** Deadlock and serialization failures: the transaction was rolled back and may simply run again. */
const CONFLICT_CODES = new Set(["40P01", "40001"]);
const ATTEMPTS = 5;

/**
 * Runs statements and transactions on the pool. In database-clock mode every transaction
 * reads the database clock as it begins (in the same round trip as BEGIN) and uses it for
 * every time it writes; in caller mode it uses the `now` it is given.
 *
 * What is retried here, and what is left to the caller: a deadlock or serialization failure
 * rolls back and runs again; so does a pooled connection found dead (the server restarted, or
 * the connection was cut while idle) before anything was written. Any other connection failure
 * rejects the operation, never crashing the process: the engine decides whether to retry.
 */
export class PgRunner {
  constructor(
    private readonly pool: pg.Pool,
    private readonly clock: "database" | "caller",
    private readonly channel: string,
    private readonly journal?: JournalNotices,
  ) {}

  /** The wake-up channel's name as `pg_notify` takes it (unquoted), for a statement that wakes workers itself. */
  get wakeChannel(): string {
    return channelName(this.channel);
  }

  /** `now` for a single statement: the caller's, or NULL so the statement reads the database clock. */
  nowParam(now: number): number | null {
    return this.clock === "database" ? null : now;
  }

  /**
   * Runs one statement outside any transaction. Every such statement of the store is a read or an
   * idempotent write (renewing leases, the worker registry), so it runs again on a fresh connection
   * when its connection turns out dead.
   */
  async query<R extends pg.QueryResultRow>(statement: Sql | string, values: readonly unknown[] = []): Promise<R[]> {
    return retrying(
      async () => (await this.pool.query<R>(toConfig(statement, values))).rows,
      (error) => isConflict(error) || isConnectionLoss(error),
    );
  }

  /**
   * Runs one writing statement outside any transaction, so it commits by itself in its one round
   * trip. Deadlocks and serialization failures (rolled back) run it again; a lost connection does
   * not, since the statement may have committed: the caller decides, as for a lost COMMIT.
   */
  async write<R extends pg.QueryResultRow>(statement: Sql, values: readonly unknown[]): Promise<R[]> {
    return retrying(async () => (await this.pool.query<R>(toConfig(statement, values))).rows, isConflict);
  }

  /**
   * The journal notice a commit appending entries of `runIds` sends (see {@link Tx.journaled}),
   * as `pg_notify` takes it: the channel's name and the payload, or nulls when no one listens to any of them.
   */
  journalNotice(runIds: Iterable<string>): { channel: string | null; payload: string | null } {
    const named = this.journal ? this.journal.listened(new Set(runIds)) : [];
    if (named.length === 0 || !this.journal) return { channel: null, payload: null };
    return { channel: channelName(this.journal.channel), payload: journalPayload(named) };
  }

  /** Runs `fn` with a pooled connection of its own (for migrations), again if the connection was dead. */
  async withClient<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    return retrying(
      () =>
        this.checkedOut(async (client, exec) => {
          await exec("SELECT 1");
          return fn(client);
        }),
      (error) => error instanceof StaleConnection,
    ).catch(unwrap);
  }

  /**
   * Runs `fn` in one transaction and commits it; rolls back if it throws. Deadlocks and
   * serialization failures roll back and run `fn` again (up to 5 times), so `fn` must only
   * read and write through `tx`.
   */
  async transaction<T>(now: number, fn: (tx: Tx) => Promise<T>): Promise<T> {
    return retrying(
      () => this.once(now, fn),
      (error) => isConflict(error) || error instanceof StaleConnection,
    ).catch(unwrap);
  }

  private async once<T>(callerNow: number, fn: (tx: Tx) => Promise<T>): Promise<T> {
    return this.checkedOut(async (_client, exec, broken) => {
      const now = await this.begin(exec, callerNow);
      let wake = false;
      const journaled = new Set<string>();
      const tx: Tx = {
        now,
        query: async <R extends pg.QueryResultRow>(statement: Sql | string, values: readonly unknown[] = []) =>
          (await exec<R>(toConfig(statement, values))).rows,
        wake: () => {
          wake = true;
        },
        journaled: (runIds) => {
          for (const runId of runIds) journaled.add(runId);
        },
      };
      try {
        const result = await fn(tx);
        // Notices go out with the commit (never for a transaction that rolls back), in its round trip.
        const statements: string[] = [];
        if (wake) statements.push(`NOTIFY ${this.channel}`);
        const named = journaled.size > 0 && this.journal ? this.journal.listened(journaled) : [];
        if (named.length > 0 && this.journal) statements.push(`NOTIFY ${this.journal.channel}, ${pg.escapeLiteral(journalPayload(named))}`);
        statements.push("COMMIT");
        await exec(statements.join("; "));
        return result;
      } catch (error) {
        if (!broken()) await exec("ROLLBACK").catch(() => undefined);
        throw error;
      }
    });
  }

  /**
   * Checks out a connection for `fn`. Its first statement failing with a lost connection becomes
   * a {@link StaleConnection} (nothing was done, so the caller may run `fn` again on another one).
   */
  private async checkedOut<T>(
    fn: (
      client: pg.PoolClient,
      exec: <R extends pg.QueryResultRow>(config: pg.QueryConfig | string) => Promise<pg.QueryResult<R>>,
      broken: () => boolean,
    ) => Promise<T>,
  ): Promise<T> {
    const client = await this.pool.connect();
    // A connection that dies while checked out emits 'error'; without a listener that would crash the process.
    let broken: Error | undefined;
    const onError = (error: Error): void => {
      broken ??= error;
    };
    client.on("error", onError);
    let first = true;
    const exec = async <R extends pg.QueryResultRow>(config: pg.QueryConfig | string): Promise<pg.QueryResult<R>> => {
      const wasFirst = first;
      first = false;
      try {
        return await client.query<R>(config);
      } catch (error) {
        // A server error leaves the connection usable (after ROLLBACK); a lost connection does not.
        if (isConnectionLoss(error)) {
          broken ??= error as Error;
          if (wasFirst) throw new StaleConnection(error);
        }
        throw error;
      }
    };
    try {
      return await fn(client, exec, () => broken !== undefined);
    } finally {
      // A broken connection is destroyed, not pooled: it keeps the listener, because the server may
      // still send its FATAL (e.g. 57P01 after pg_terminate_backend) while it closes, and an 'error'
      // event without a listener would crash the process. A healthy one goes back to the pool, whose
      // own idle listener takes over.
      if (broken === undefined) client.off("error", onError);
      client.release(broken);
    }
  }

  private async begin(exec: (text: string) => Promise<pg.QueryResult>, callerNow: number): Promise<number> {
    if (this.clock === "caller") {
      await exec("BEGIN");
      return callerNow;
    }
    const results = (await exec(`BEGIN; SELECT ${DB_NOW} AS now`)) as unknown as pg.QueryResult<{ now: number }>[];
    const now = results[1]?.rows[0]?.now;
    if (typeof now !== "number") throw new Error("PostgreSQL did not return the clock.");
    return now;
  }
}

/** A pooled connection was dead before it did anything. */
class StaleConnection extends Error {
  constructor(override readonly cause: unknown) {
    super("A pooled PostgreSQL connection was lost before use.");
  }
}

function unwrap(error: unknown): never {
  throw error instanceof StaleConnection ? error.cause : error;
}

function toConfig(statement: Sql | string, values: readonly unknown[]): pg.QueryConfig {
  return typeof statement === "string" ? { text: statement, values: [...values] } : { name: statement.name, text: statement.text, values: [...values] };
}

function isConflict(error: unknown): boolean {
  return error instanceof pg.DatabaseError && error.code !== undefined && CONFLICT_CODES.has(error.code);
}

/**
 * What pg says of a connection that is gone: it ended under a statement, or a statement was sent
 * on a connection that had already failed (e.g. handed out by the pool just as its FATAL arrived).
 */
const LOST_MESSAGES = new Set([
  "Connection terminated unexpectedly",
  "Client has encountered a connection error and is not queryable",
  "Client was closed and is not queryable",
]);

/**
 * The connection is gone: the server ended it (shutdown, restart, terminated backend: SQLSTATE
 * class 57P0x or 08) or the socket failed. Failing to connect at all is not included: retrying
 * at once would not help, and it would double the wait for an unreachable server.
 */
export function isConnectionLoss(error: unknown): boolean {
  if (error instanceof StaleConnection) return true;
  if (error instanceof pg.DatabaseError) return error.code !== undefined && (error.code.startsWith("57P0") || error.code.startsWith("08"));
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  return code === "ECONNRESET" || code === "EPIPE" || LOST_MESSAGES.has(error.message);
}

async function retrying<T>(fn: () => Promise<T>, retryable: (error: unknown) => boolean): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (error) {
      if (attempt >= ATTEMPTS || !retryable(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 10 * attempt));
    }
  }
}
