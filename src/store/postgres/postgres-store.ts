import type * as S from "../../core/store.js";
import { ComposedStore } from "../common/composed-store.js";
import { PostgresBlobs } from "./postgres-blobs.js";
import type { PostgresStoreOptions } from "./postgres-config.js";
import { PostgresConnection, type PostgresSettings } from "./postgres-connection.js";
import { PostgresHumanRequests } from "./postgres-human-requests.js";
import { PostgresInbox } from "./postgres-inbox.js";
import { PostgresJournal } from "./postgres-journal.js";
import { PostgresLeases } from "./postgres-leases.js";
import { PostgresLiveDeltas } from "./postgres-live-deltas.js";
import { PostgresLiveRuns } from "./postgres-live-runs.js";
import { PostgresOperations } from "./postgres-operations.js";
import { PostgresOutbox } from "./postgres-outbox.js";
import { PostgresRetention } from "./postgres-retention.js";
import { PostgresRuns } from "./postgres-runs.js";
import { PostgresSchedules } from "./postgres-schedules.js";
import { PostgresSecurity } from "./postgres-security.js";
import { PostgresStepSlots } from "./postgres-step-flow.js";
import { LIST_TOOL_CALLS, READ_AGENT_MESSAGES } from "./postgres-agent-rows-queries.js";
import { messageBounds } from "../common/agent-rows.js";

export type { PostgresStoreOptions } from "./postgres-config.js";
export { MAX_COMMIT_WRITERS, type PostgresSettings } from "./postgres-connection.js";

/**
 * The {@link Store} for many workers on many hosts, on PostgreSQL through a `pg` pool. All tables
 * live in one schema (`?schema=`, default `cairn`). Claims lock candidates with
 * `FOR UPDATE SKIP LOCKED`, so concurrent claimers never wait for or double-claim a run; every
 * commit locks its runs, fences them by epoch and writes the whole batch in one transaction.
 * By default leases and timers run on the database clock ({@link PostgresStore.now}), and
 * {@link PostgresStore.onWake} pushes wake-ups with LISTEN/NOTIFY.
 *
 * Opening ({@link PostgresStore.migrate}, which `openStore` calls) refuses a server configured to
 * lose acknowledged commits (`fsync=off`, `synchronous_commit=off`) unless `allowWeakDurability`.
 * Connection failures reject the operation that met them and never crash the process; the pool
 * reconnects on the next operation.
 *
 * Each entity of the {@link Store} port has its own module (`postgres-runs.ts`, `postgres-journal.ts`, …,
 * with its statements in `postgres-<entity>-queries.ts`), all sharing one `PostgresConnection`;
 * `ComposedStore` forwards each method of the port to its entity.
 *
 * @example
 * const store = new PostgresStore("postgres://cairn@db.internal/cairn?schema=prod");
 * await store.migrate();
 */
export class PostgresStore extends ComposedStore implements S.Store {
  /** The URL without password, with its schema, e.g. `postgres://cairn@db/cairn?schema=cairn`. */
  readonly url: string;
  /**
   * The database clock, epoch ms (database-clock mode only; absent with `clock: "caller"`).
   * See {@link Store.now}.
   */
  readonly now?: () => Promise<number>;
  /**
   * See {@link Store.commitWriters}: half the pool, at most {@link MAX_COMMIT_WRITERS} (4 with the
   * default pool of 10), leaving connections for claims, lease renewals and reads.
   */
  readonly commitWriters: number;
  private readonly db: PostgresConnection;

  /**
   * Creates the pool (connections open on first use). Call {@link PostgresStore.migrate} before use.
   * @throws StoreUrlError / ValidationError for a URL or option it cannot use.
   */
  constructor(url: string, options: PostgresStoreOptions = {}) {
    const db = new PostgresConnection(url, options);
    super({
      runs: new PostgresRuns(db),
      journal: new PostgresJournal(db),
      leases: new PostgresLeases(db),
      inbox: new PostgresInbox(db),
      humanRequests: new PostgresHumanRequests(db),
      outbox: new PostgresOutbox(db),
      operations: new PostgresOperations(db),
      security: new PostgresSecurity(db),
      retention: new PostgresRetention(db),
      schedules: new PostgresSchedules(db),
      blobs: new PostgresBlobs(db),
      stepSlots: new PostgresStepSlots(db),
      liveRuns: new PostgresLiveRuns(db),
      liveDeltas: new PostgresLiveDeltas(db),
      agentRows: {
        readAgentMessages: (runId, options) => db.query<S.AgentMessageRow>(READ_AGENT_MESSAGES, [runId, ...messageBounds(options)]),
        listToolCalls: (runId) => db.query<S.ToolCallRow>(LIST_TOOL_CALLS, [runId]),
      },
    });
    this.db = db;
    this.url = db.url;
    this.commitWriters = db.commitWriters;
    if (db.config.clock === "database") this.now = async () => db.dbNow();
  }

  /** The schema that holds the tables. */
  get schema(): string {
    return this.db.config.schema;
  }

  /**
   * Checks the server's durability settings, then creates or upgrades the schema (see
   * {@link Store.migrate}). Safe to call from many processes at once.
   * @throws StoreInvalidError for a server with weak durability or a schema that is not Cairn's.
   * @throws SchemaTooNewError when the schema was written by a newer Cairn.
   */
  migrate(): Promise<void> {
    return this.db.migrate();
  }

  /** The server and schema this store uses, e.g. to confirm durability settings and the schema version. */
  settings(): Promise<PostgresSettings> {
    return this.db.settings();
  }

  /** Ends the LISTEN connection and the pool. Idempotent. */
  close(): Promise<void> {
    return this.db.close();
  }

  /** See {@link Store.onWake}: called after runs became runnable anywhere (or may have, after a reconnection). */
  onWake(listener: () => void): () => void {
    return this.db.wakes.subscribe(listener);
  }

  /**
   * See {@link Store.onJournal}. While it has subscribers this store LISTENs on the schema's journal
   * channel and advertises their runs in `journal_listeners`; writers (any process) send a journal
   * NOTIFY with a commit that appends entries only when some of its runs are advertised, naming
   * those, learning of a newly advertised run at once through the wake channel (or within seconds).
   */
  onJournal(runId: string, listener: () => void): () => void {
    return this.db.journalNotices.subscribe(runId, listener);
  }

  /** See {@link Store.onLiveDeltas}: LISTENs on the schema's live channel (its own connection) while subscribed. */
  onLiveDeltas(listener: () => void): () => void {
    return this.db.liveNotices.subscribe(() => listener());
  }

  /** Resolves once the live channel is listened on (after the first {@link PostgresStore.onLiveDeltas}); for tests. */
  async listeningForLiveDeltas(): Promise<void> {
    await this.db.liveNotices.listening();
  }

  /** Resolves once the runs subscribed to with {@link PostgresStore.onJournal} are listened for and advertised. */
  async listeningForJournal(): Promise<void> {
    await this.db.journalNotices.listening();
  }

  /** Resolves once wake-ups are being listened for (after the first {@link PostgresStore.onWake}). */
  async listening(): Promise<void> {
    await this.db.wakes.listening();
  }
}
