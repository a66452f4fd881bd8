import type * as S from "../../core/store.js";
import { ComposedStore } from "../common/composed-store.js";
import { SqliteBlobs } from "./sqlite-blobs.js";
import { SqliteConnection, type SqliteSettings } from "./sqlite-connection.js";
import { SqliteHumanRequests } from "./sqlite-human-requests.js";
import { SqliteInbox } from "./sqlite-inbox.js";
import { SqliteJournal } from "./sqlite-journal.js";
import { SqliteLeases } from "./sqlite-leases.js";
import { SqliteLiveRuns } from "./sqlite-live-runs.js";
import { SqliteLiveDeltas } from "./sqlite-live-deltas.js";
import type { SqliteStoreOptions } from "./sqlite-open.js";
import { SqliteOperations } from "./sqlite-operations.js";
import { SqliteOutbox } from "./sqlite-outbox.js";
import { SqliteRetention } from "./sqlite-retention.js";
import { SqliteRuns } from "./sqlite-runs.js";
import { SqliteSchedules } from "./sqlite-schedules.js";
import { SqliteSecurity } from "./sqlite-security.js";
import { SqliteStepSlots } from "./sqlite-step-flow.js";
import { SqliteWriter } from "./sqlite-write.js";

export type { SqliteSettings } from "./sqlite-connection.js";

/**
 * The embedded {@link Store} on one SQLite file (better-sqlite3, WAL, `synchronous=FULL`).
 * Several worker processes may share the file: every write is one BEGIN IMMEDIATE
 * transaction, so claims and fenced appends serialise on SQLite's write lock.
 * Opening refuses, without modifying it, a file that is not a healthy Cairn store.
 *
 * Each entity of the {@link Store} port has its own module (`sqlite-runs.ts`, `sqlite-journal.ts`, …,
 * with its statements in `sqlite-<entity>-queries.ts`), all sharing one `SqliteConnection` and the
 * writes of `SqliteWriter`; `ComposedStore` forwards each method of the port to its entity.
 *
 * @example
 * const store = new SqliteStore(".cairn/cairn.db");
 * await store.migrate();
 */
export class SqliteStore extends ComposedStore implements S.Store {
  /** `sqlite:<absolute path>` or `sqlite::memory:`. */
  readonly url: string;
  private readonly db: SqliteConnection;

  /**
   * Opens (creating if needed) the store at `path` (`":memory:"` for a private in-memory store).
   * Call {@link SqliteStore.migrate} before use.
   * @throws StoreInvalidError / SchemaTooNewError for a file it must not touch.
   */
  constructor(path: string, options: SqliteStoreOptions = {}) {
    const db = new SqliteConnection(path, options);
    const writer = new SqliteWriter(db);
    super({
      runs: new SqliteRuns(db, writer),
      journal: new SqliteJournal(db, writer),
      leases: new SqliteLeases(db, writer),
      inbox: new SqliteInbox(db, writer),
      humanRequests: new SqliteHumanRequests(db, writer),
      outbox: new SqliteOutbox(db),
      operations: new SqliteOperations(db),
      security: new SqliteSecurity(db),
      retention: new SqliteRetention(db),
      schedules: new SqliteSchedules(db),
      blobs: new SqliteBlobs(db),
      stepSlots: new SqliteStepSlots(db, writer),
      liveRuns: new SqliteLiveRuns(db),
      liveDeltas: new SqliteLiveDeltas(db),
      agentRows: {
        readAgentMessages: async (runId, options) => writer.agentRows.read(runId, options),
        listToolCalls: async (runId) => writer.agentRows.toolCalls(runId),
      },
    });
    this.db = db;
    this.url = db.url;
  }

  /** See {@link Store.migrate}. */
  migrate(): Promise<void> {
    return this.db.migrate();
  }

  /** See {@link Store.close}. */
  close(): Promise<void> {
    return this.db.close();
  }

  /** The connection's pragmas, e.g. to confirm WAL and `synchronous=FULL`. */
  settings(): SqliteSettings {
    return this.db.settings();
  }
}
