import type { QueueStat } from "../../core/flow-control.js";
import type { DrainedVersion, VersionCount } from "../../core/deploys.js";
import type { HumanAnswer, JournalEntry, NewEntry } from "../../core/journal.js";
import type { LiveDeltaRecord, NewLiveDelta } from "../../core/live-delta-store.js";
import type { ListOutboxQuery, OutboxClaimRequest, OutboxMessage, OutboxSettlement } from "../../core/outbox.js";
import type { RunRecord, RunStatus } from "../../core/run.js";
import type { ScheduleDefinitionRecord, ScheduleRecord, ScheduleState } from "../../core/schedule.js";
import type { StepSlotGrant, StepSlotRequest } from "../../core/step-flow.js";
import type * as S from "../../core/store.js";
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
 * this class composes them and forwards each method to its entity.
 *
 * @example
 * const store = new PostgresStore("postgres://cairn@db.internal/cairn?schema=prod");
 * await store.migrate();
 */
export class PostgresStore implements S.Store {
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
  // The entities of the Store port, each in its own module; a new entity is one more field here and its forwarders below.
  private readonly runs: PostgresRuns;
  private readonly journal: PostgresJournal;
  private readonly leases: PostgresLeases;
  private readonly inbox: PostgresInbox;
  private readonly humans: PostgresHumanRequests;
  private readonly outbox: PostgresOutbox;
  private readonly operations: PostgresOperations;
  private readonly security: PostgresSecurity;
  private readonly retention: PostgresRetention;
  private readonly schedules: PostgresSchedules;
  private readonly blobs: PostgresBlobs;
  private readonly stepSlots: PostgresStepSlots;
  private readonly liveRuns: PostgresLiveRuns;
  private readonly liveDeltas: PostgresLiveDeltas;

  /**
   * Creates the pool (connections open on first use). Call {@link PostgresStore.migrate} before use.
   * @throws StoreUrlError / ValidationError for a URL or option it cannot use.
   */
  constructor(url: string, options: PostgresStoreOptions = {}) {
    const db = (this.db = new PostgresConnection(url, options));
    this.url = db.url;
    this.commitWriters = db.commitWriters;
    if (db.config.clock === "database") this.now = async () => db.dbNow();
    this.runs = new PostgresRuns(db);
    this.journal = new PostgresJournal(db);
    this.leases = new PostgresLeases(db);
    this.inbox = new PostgresInbox(db);
    this.humans = new PostgresHumanRequests(db);
    this.outbox = new PostgresOutbox(db);
    this.operations = new PostgresOperations(db);
    this.security = new PostgresSecurity(db);
    this.retention = new PostgresRetention(db);
    this.schedules = new PostgresSchedules(db);
    this.blobs = new PostgresBlobs(db);
    this.stepSlots = new PostgresStepSlots(db);
    this.liveRuns = new PostgresLiveRuns(db);
    this.liveDeltas = new PostgresLiveDeltas(db);
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
    return this.journal.onJournal(runId, listener);
  }

  /** See {@link Store.onLiveDeltas}: LISTENs on the schema's live channel (its own connection) while subscribed. */
  onLiveDeltas(listener: () => void): () => void {
    return this.liveDeltas.onLiveDeltas(listener);
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

  // Runs (postgres-runs.ts)
  createRun(run: S.NewRun, now: number): Promise<{ run: RunRecord; created: boolean }> {
    return this.runs.createRun(run, now);
  }
  createRuns(runs: readonly S.NewRun[], now: number): Promise<{ run: RunRecord; created: boolean }[]> {
    return this.runs.createRuns(runs, now);
  }
  createRunWithJournal(run: S.NewRun, entries: readonly S.CopiedEntry[], now: number): Promise<{ run: RunRecord; created: boolean }> {
    return this.runs.createRunWithJournal(run, entries, now);
  }
  debounceRun(run: S.NewRun, key: string, startAt: number, now: number): Promise<{ run: RunRecord; created: boolean }> {
    return this.runs.debounceRun(run, key, startAt, now);
  }
  getRun(runId: string): Promise<RunRecord | undefined> {
    return this.runs.getRun(runId);
  }
  countRuns(filter?: S.RunFilter): Promise<S.RunCount[]> {
    return this.runs.countRuns(filter);
  }
  /** See {@link Store.queueStats}. In database-clock mode `now` is ignored. */
  queueStats(now: number): Promise<QueueStat[]> {
    return this.runs.queueStats(now);
  }
  listRuns(query: S.ListRunsQuery): Promise<S.RunPage> {
    return this.runs.listRuns(query);
  }
  listRunEntries(query: S.RunEntriesQuery): Promise<S.RunEntry[]> {
    return this.runs.listRunEntries(query);
  }

  // The journal (postgres-journal.ts)
  readJournal(runId: string, options?: { afterSeq?: number; limit?: number }): Promise<JournalEntry[]> {
    return this.journal.readJournal(runId, options);
  }
  readJournalForResume(runId: string): Promise<JournalEntry[]> {
    return this.journal.readJournalForResume(runId);
  }
  /** See {@link Store.searchJournal}: tsvector ('simple' configuration), any of the query's words, ranked by ts_rank. */
  searchJournal(runId: string, query: string, limit: number): Promise<S.JournalTextHit[]> {
    return this.journal.searchJournal(runId, query, limit);
  }
  /** See {@link Store.commit}: the whole batch is one transaction (a batch of plain appends, one statement). */
  commit(writes: S.RunWrite[], now: number): Promise<S.CommitResult[]> {
    return this.journal.commit(writes, now);
  }

  // Leases (postgres-leases.ts); in database-clock mode `request.now` is ignored.
  claimRuns(request: S.ClaimRequest): Promise<RunRecord[]> {
    return this.leases.claimRuns(request);
  }
  renewLeases(request: S.RenewRequest): Promise<string[]> {
    return this.leases.renewLeases(request);
  }
  controlRun(runId: string, allowed: readonly RunStatus[], entry: NewEntry, now: number): Promise<{ run: RunRecord; applied: boolean }> {
    return this.leases.controlRun(runId, allowed, entry, now);
  }

  // The inbox (postgres-inbox.ts) and human requests (postgres-human-requests.ts)
  sendEvent(event: S.NewInboxEvent, now: number): Promise<{ duplicate: boolean }> {
    return this.inbox.sendEvent(event, now);
  }
  pendingEvents(runId: string, type: string, limit?: number): Promise<S.InboxEvent[]> {
    return this.inbox.pendingEvents(runId, type, limit);
  }
  listInbox(runId: string): Promise<S.InboxEvent[]> {
    return this.inbox.listInbox(runId);
  }
  getHumanRequest(requestId: string): Promise<S.HumanRequest | undefined> {
    return this.humans.getHumanRequest(requestId);
  }
  listHumanRequests(query: S.ListHumanRequestsQuery): Promise<S.HumanRequest[]> {
    return this.humans.listHumanRequests(query);
  }
  answerHuman(requestId: string, answer: HumanAnswer, now: number): Promise<void> {
    return this.humans.answerHuman(requestId, answer, now);
  }

  // The outbox (postgres-outbox.ts); in database-clock mode `now` is ignored.
  claimOutbox(request: OutboxClaimRequest): Promise<OutboxMessage[]> {
    return this.outbox.claimOutbox(request);
  }
  settleOutbox(settlement: OutboxSettlement, now: number): Promise<boolean> {
    return this.outbox.settleOutbox(settlement, now);
  }
  listOutbox(query: ListOutboxQuery): Promise<OutboxMessage[]> {
    return this.outbox.listOutbox(query);
  }
  getOutboxMessage(messageId: string): Promise<OutboxMessage | undefined> {
    return this.outbox.getOutboxMessage(messageId);
  }
  retryOutbox(messageId: string, now: number): Promise<{ message: OutboxMessage; applied: boolean }> {
    return this.outbox.retryOutbox(messageId, now);
  }

  // Operations (postgres-operations.ts); in database-clock mode worker heartbeats and stuck-run checks use the database's time.
  upsertWorker(worker: S.WorkerRecord): Promise<void> {
    return this.operations.upsertWorker(worker);
  }
  removeWorker(workerId: string): Promise<void> {
    return this.operations.removeWorker(workerId);
  }
  listWorkers(since: number): Promise<S.WorkerRecord[]> {
    return this.operations.listWorkers(since);
  }
  listStuckRuns(now: number, graceMs: number, limit?: number): Promise<RunRecord[]> {
    return this.operations.listStuckRuns(now, graceMs, limit);
  }
  countVersions(): Promise<VersionCount[]> {
    return this.operations.countVersions();
  }
  setVersionDrained(workflow: string, version: string, drained: boolean, now: number): Promise<boolean> {
    return this.operations.setVersionDrained(workflow, version, drained, now);
  }
  listDrainedVersions(): Promise<DrainedVersion[]> {
    return this.operations.listDrainedVersions();
  }

  // Security (postgres-security.ts)
  createToken(token: S.TokenRecord): Promise<void> {
    return this.security.createToken(token);
  }
  listTokens(): Promise<S.TokenRecord[]> {
    return this.security.listTokens();
  }
  getToken(id: string): Promise<S.TokenRecord | undefined> {
    return this.security.getToken(id);
  }
  revokeToken(id: string, now: number): Promise<boolean> {
    return this.security.revokeToken(id, now);
  }
  appendAudit(entry: S.NewAuditEntry): Promise<S.AuditEntry> {
    return this.security.appendAudit(entry);
  }
  listAudit(query: S.ListAuditQuery): Promise<S.AuditEntry[]> {
    return this.security.listAudit(query);
  }

  // Retention (postgres-retention.ts)
  listPrunableRuns(query: S.PruneQuery): Promise<RunRecord[]> {
    return this.retention.listPrunableRuns(query);
  }
  deleteRuns(runs: readonly { runId: string; lastSeq: number }[]): Promise<string[]> {
    return this.retention.deleteRuns(runs);
  }
  readRunRows(runId: string): Promise<S.RunImport | undefined> {
    return this.retention.readRunRows(runId);
  }
  importRun(data: S.RunImport): Promise<void> {
    return this.retention.importRun(data);
  }

  // Schedules (postgres-schedules.ts); times are the caller's (the engine's clock follows the database's).
  saveSchedule(definition: ScheduleDefinitionRecord, now: number): Promise<ScheduleRecord> {
    return this.schedules.saveSchedule(definition, now);
  }
  getSchedule(name: string): Promise<ScheduleRecord | undefined> {
    return this.schedules.getSchedule(name);
  }
  listSchedules(): Promise<ScheduleRecord[]> {
    return this.schedules.listSchedules();
  }
  deleteSchedule(name: string): Promise<boolean> {
    return this.schedules.deleteSchedule(name);
  }
  claimSchedule(name: string, owner: string, now: number, leaseMs: number): Promise<ScheduleRecord | undefined> {
    return this.schedules.claimSchedule(name, owner, now, leaseMs);
  }
  updateScheduleState(name: string, owner: string, epoch: number, state: ScheduleState, now: number): Promise<boolean> {
    return this.schedules.updateScheduleState(name, owner, epoch, state, now);
  }
  setSchedulePaused(name: string, paused: boolean, now: number): Promise<ScheduleRecord | undefined> {
    return this.schedules.setSchedulePaused(name, paused, now);
  }

  // Blobs (postgres-blobs.ts) and step slots (postgres-step-flow.ts)
  readBlobs(hashes: readonly string[]): Promise<S.PayloadBlob[]> {
    return this.blobs.readBlobs(hashes);
  }
  deleteUnreferencedBlobs(before: number): Promise<number> {
    return this.blobs.deleteUnreferencedBlobs(before);
  }
  acquireStepSlots(request: StepSlotRequest, now: number): Promise<StepSlotGrant> {
    return this.stepSlots.acquireStepSlots(request, now);
  }
  releaseStepSlots(runId: string, opKey: string, buckets: readonly string[], now: number): Promise<void> {
    return this.stepSlots.releaseStepSlots(runId, opKey, buckets, now);
  }

  // Live runs: tags, values, deadlines (postgres-live-runs.ts)
  getRunTags(runId: string): Promise<Record<string, string>> {
    return this.liveRuns.getRunTags(runId);
  }
  getRunValue(runId: string, kind: S.RunValueKind, name: string): Promise<S.RunValue | undefined> {
    return this.liveRuns.getRunValue(runId, kind, name);
  }
  listDueDeadlines(now: number, limit: number): Promise<S.RunDeadline[]> {
    return this.liveRuns.listDueDeadlines(now, limit);
  }
  clearDeadline(runId: string): Promise<boolean> {
    return this.liveRuns.clearDeadline(runId);
  }

  // Live deltas (postgres-live-deltas.ts)
  advertiseLiveDeltas(origin: string, runIds: readonly string[], expiresAt: number): Promise<void> {
    return this.liveDeltas.advertiseLiveDeltas(origin, runIds, expiresAt);
  }
  retireLiveDeltas(origin: string, runIds?: readonly string[]): Promise<void> {
    return this.liveDeltas.retireLiveDeltas(origin, runIds);
  }
  listStreamedRuns(origin: string, now: number): Promise<string[]> {
    return this.liveDeltas.listStreamedRuns(origin, now);
  }
  /** See {@link Store.writeLiveDeltas}: one statement into UNLOGGED tables (no WAL), with a NOTIFY on the schema's live channel. */
  writeLiveDeltas(origin: string, records: readonly NewLiveDelta[], now: number): Promise<void> {
    return this.liveDeltas.writeLiveDeltas(origin, records, now);
  }
  readLiveDeltas(runIds: readonly string[], afterId: number, origin: string, limit?: number): Promise<LiveDeltaRecord[]> {
    return this.liveDeltas.readLiveDeltas(runIds, afterId, origin, limit);
  }
  pruneLiveDeltas(before: number): Promise<number> {
    return this.liveDeltas.pruneLiveDeltas(before);
  }
}
