import type { QueueStat } from "../../core/flow-control.js";
import type { DrainedVersion, VersionCount } from "../../core/deploys.js";
import type { HumanAnswer, JournalEntry, NewEntry } from "../../core/journal.js";
import type { LiveDeltaRecord, NewLiveDelta } from "../../core/live-delta-store.js";
import type { ListOutboxQuery, OutboxClaimRequest, OutboxMessage, OutboxSettlement } from "../../core/outbox.js";
import type { RunRecord, RunStatus } from "../../core/run.js";
import type { ScheduleDefinitionRecord, ScheduleRecord, ScheduleState } from "../../core/schedule.js";
import type { StepSlotGrant, StepSlotRequest } from "../../core/step-flow.js";
import type * as S from "../../core/store.js";
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
 * writes of `SqliteWriter`; this class composes them and forwards each method to its entity.
 *
 * @example
 * const store = new SqliteStore(".cairn/cairn.db");
 * await store.migrate();
 */
export class SqliteStore implements S.Store {
  /** `sqlite:<absolute path>` or `sqlite::memory:`. */
  readonly url: string;
  private readonly db: SqliteConnection;
  // The entities of the Store port, each in its own module; a new entity is one more field here and its forwarders below.
  private readonly runs: SqliteRuns;
  private readonly journal: SqliteJournal;
  private readonly leases: SqliteLeases;
  private readonly inbox: SqliteInbox;
  private readonly humans: SqliteHumanRequests;
  private readonly outbox: SqliteOutbox;
  private readonly operations: SqliteOperations;
  private readonly security: SqliteSecurity;
  private readonly retention: SqliteRetention;
  private readonly schedules: SqliteSchedules;
  private readonly blobs: SqliteBlobs;
  private readonly stepSlots: SqliteStepSlots;
  private readonly liveRuns: SqliteLiveRuns;
  private readonly liveDeltas: SqliteLiveDeltas;

  /**
   * Opens (creating if needed) the store at `path` (`":memory:"` for a private in-memory store).
   * Call {@link SqliteStore.migrate} before use.
   * @throws StoreInvalidError / SchemaTooNewError for a file it must not touch.
   */
  constructor(path: string, options: SqliteStoreOptions = {}) {
    const db = (this.db = new SqliteConnection(path, options));
    const writer = new SqliteWriter(db);
    this.url = db.url;
    this.runs = new SqliteRuns(db, writer);
    this.journal = new SqliteJournal(db, writer);
    this.leases = new SqliteLeases(db, writer);
    this.inbox = new SqliteInbox(db, writer);
    this.humans = new SqliteHumanRequests(db, writer);
    this.outbox = new SqliteOutbox(db);
    this.operations = new SqliteOperations(db);
    this.security = new SqliteSecurity(db);
    this.retention = new SqliteRetention(db);
    this.schedules = new SqliteSchedules(db);
    this.blobs = new SqliteBlobs(db);
    this.stepSlots = new SqliteStepSlots(db, writer);
    this.liveRuns = new SqliteLiveRuns(db);
    this.liveDeltas = new SqliteLiveDeltas(db);
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

  // Runs (sqlite-runs.ts)
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
  queueStats(now: number): Promise<QueueStat[]> {
    return this.runs.queueStats(now);
  }
  listRuns(query: S.ListRunsQuery): Promise<S.RunPage> {
    return this.runs.listRuns(query);
  }
  listRunEntries(query: S.RunEntriesQuery): Promise<S.RunEntry[]> {
    return this.runs.listRunEntries(query);
  }

  // The journal (sqlite-journal.ts)
  readJournal(runId: string, options?: { afterSeq?: number; limit?: number }): Promise<JournalEntry[]> {
    return this.journal.readJournal(runId, options);
  }
  readJournalForResume(runId: string): Promise<JournalEntry[]> {
    return this.journal.readJournalForResume(runId);
  }
  /** See {@link Store.searchJournal}: FTS5, any of the query's words, ranked by bm25. */
  searchJournal(runId: string, query: string, limit: number): Promise<S.JournalTextHit[]> {
    return this.journal.searchJournal(runId, query, limit);
  }
  /** See {@link Store.commit}: the whole batch is one BEGIN IMMEDIATE transaction. */
  commit(writes: S.RunWrite[], now: number): Promise<S.CommitResult[]> {
    return this.journal.commit(writes, now);
  }

  // Leases (sqlite-leases.ts)
  claimRuns(request: S.ClaimRequest): Promise<RunRecord[]> {
    return this.leases.claimRuns(request);
  }
  renewLeases(request: S.RenewRequest): Promise<string[]> {
    return this.leases.renewLeases(request);
  }
  controlRun(runId: string, allowed: readonly RunStatus[], entry: NewEntry, now: number): Promise<{ run: RunRecord; applied: boolean }> {
    return this.leases.controlRun(runId, allowed, entry, now);
  }

  // The inbox (sqlite-inbox.ts) and human requests (sqlite-human-requests.ts)
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

  // The outbox (sqlite-outbox.ts)
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

  // Operations (sqlite-operations.ts)
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

  // Security (sqlite-security.ts)
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

  // Retention (sqlite-retention.ts)
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

  // Schedules (sqlite-schedules.ts)
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

  // Blobs (sqlite-blobs.ts) and step slots (sqlite-step-flow.ts)
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

  // Live runs: tags, values, deadlines (sqlite-live-runs.ts)
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

  // Live deltas (sqlite-live-deltas.ts)
  advertiseLiveDeltas(origin: string, runIds: readonly string[], expiresAt: number): Promise<void> {
    return this.liveDeltas.advertiseLiveDeltas(origin, runIds, expiresAt);
  }
  retireLiveDeltas(origin: string, runIds?: readonly string[]): Promise<void> {
    return this.liveDeltas.retireLiveDeltas(origin, runIds);
  }
  listStreamedRuns(origin: string, now: number): Promise<string[]> {
    return this.liveDeltas.listStreamedRuns(origin, now);
  }
  /** See {@link Store.writeLiveDeltas}. Does not wait for fsync: deltas are ephemeral. */
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
