import type { QueueStat } from "../../core/flow-control.js";
import type { DrainedVersion, VersionCount } from "../../core/deploys.js";
import type { HumanAnswer, JournalEntry, NewEntry } from "../../core/journal.js";
import type { LiveDeltaRecord, NewLiveDelta } from "../../core/live-delta-store.js";
import type { ListOutboxQuery, OutboxClaimRequest, OutboxMessage, OutboxSettlement } from "../../core/outbox.js";
import type { RunRecord, RunStatus } from "../../core/run.js";
import type { ScheduleDefinitionRecord, ScheduleRecord, ScheduleState } from "../../core/schedule.js";
import type { StepSlotGrant, StepSlotRequest } from "../../core/step-flow.js";
import type * as S from "../../core/store.js";
import { MemoryBlobs } from "./memory-blobs.js";
import { MemoryFlow } from "./memory-flow.js";
import { MemoryHumanRequests } from "./memory-human-requests.js";
import { MemoryInbox } from "./memory-inbox.js";
import { MemoryJournal } from "./memory-journal.js";
import { MemoryLeases } from "./memory-leases.js";
import { MemoryLive } from "./memory-live.js";
import { MemoryLiveRuns } from "./memory-live-runs.js";
import { MemoryLiveDeltas } from "./memory-live-deltas.js";
import { MemoryOperations } from "./memory-operations.js";
import { MemoryOutbox } from "./memory-outbox.js";
import { MemoryRetention } from "./memory-retention.js";
import { MemoryRuns } from "./memory-runs.js";
import { MemorySchedules } from "./memory-schedules.js";
import { MemorySecurity } from "./memory-security.js";
import { MemoryStepSlots } from "./memory-step-flow.js";
import { MemoryTables } from "./memory-tables.js";
import { MemoryWriter } from "./memory-write.js";

/**
 * The reference {@link Store}: plain maps in one process, nothing durable.
 * It keeps exactly the rules of the SQLite and PostgreSQL stores (it passes the
 * same conformance suite), so it is the fastest way to test workflows.
 * Every method runs synchronously to completion, so each one is atomic.
 *
 * Each entity of the {@link Store} port has its own module (`memory-runs.ts`, `memory-journal.ts`, …),
 * all sharing one set of `MemoryTables` and the writes of `MemoryWriter`; this class composes them and
 * forwards each method to its entity.
 *
 * @example
 * const store = new MemoryStore();
 * await store.createRun({ runId: "r1", workflow: "hello", version: "1", input: encode({}) }, Date.now());
 */
export class MemoryStore implements S.Store {
  /** Always `memory:`. */
  readonly url = "memory:";
  // The entities of the Store port, each in its own module; a new entity is one more field here and its forwarders below.
  private readonly runs: MemoryRuns;
  private readonly journal: MemoryJournal;
  private readonly leases: MemoryLeases;
  private readonly inbox: MemoryInbox;
  private readonly humans: MemoryHumanRequests;
  private readonly outbox: MemoryOutbox;
  private readonly operations: MemoryOperations;
  private readonly security: MemorySecurity;
  private readonly retention: MemoryRetention;
  private readonly schedules = new MemorySchedules();
  private readonly blobs: MemoryBlobs;
  private readonly stepSlots: MemoryStepSlots;
  private readonly liveRuns: MemoryLiveRuns;
  private readonly liveDeltas = new MemoryLiveDeltas();

  constructor() {
    const t = new MemoryTables();
    this.outbox = new MemoryOutbox(t);
    const w = new MemoryWriter(t, new MemoryFlow(), new MemoryLive(t), this.outbox);
    this.runs = new MemoryRuns(w);
    this.journal = new MemoryJournal(w);
    this.leases = new MemoryLeases(w);
    this.inbox = new MemoryInbox(w);
    this.humans = new MemoryHumanRequests(w);
    this.operations = new MemoryOperations(t);
    this.security = new MemorySecurity(t);
    this.retention = new MemoryRetention(w);
    this.blobs = new MemoryBlobs(t);
    this.stepSlots = new MemoryStepSlots(w);
    this.liveRuns = new MemoryLiveRuns(w);
  }

  /** Nothing to create. */
  async migrate(): Promise<void> {}

  /** Nothing to release. */
  async close(): Promise<void> {}

  // Runs (memory-runs.ts)
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

  // The journal (memory-journal.ts)
  readJournal(runId: string, options?: { afterSeq?: number; limit?: number }): Promise<JournalEntry[]> {
    return this.journal.readJournal(runId, options);
  }
  readJournalForResume(runId: string): Promise<JournalEntry[]> {
    return this.journal.readJournalForResume(runId);
  }
  /** See {@link Store.searchJournal}: a scan of the run's journal, scored by the query words each text contains. */
  searchJournal(runId: string, query: string, limit: number): Promise<S.JournalTextHit[]> {
    return this.journal.searchJournal(runId, query, limit);
  }
  commit(writes: S.RunWrite[], now: number): Promise<S.CommitResult[]> {
    return this.journal.commit(writes, now);
  }

  // Leases (memory-leases.ts)
  claimRuns(request: S.ClaimRequest): Promise<RunRecord[]> {
    return this.leases.claimRuns(request);
  }
  renewLeases(request: S.RenewRequest): Promise<string[]> {
    return this.leases.renewLeases(request);
  }
  controlRun(runId: string, allowed: readonly RunStatus[], entry: NewEntry, now: number): Promise<{ run: RunRecord; applied: boolean }> {
    return this.leases.controlRun(runId, allowed, entry, now);
  }

  // The inbox (memory-inbox.ts) and human requests (memory-human-requests.ts)
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

  // The outbox (memory-outbox.ts)
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

  // Operations (memory-operations.ts)
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

  // Security (memory-security.ts)
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

  // Retention (memory-retention.ts)
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

  // Schedules (memory-schedules.ts)
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

  // Blobs (memory-blobs.ts) and step slots (memory-step-flow.ts)
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

  // Live runs: tags, values, deadlines (memory-live-runs.ts)
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

  // Live deltas (memory-live-deltas.ts)
  advertiseLiveDeltas(origin: string, runIds: readonly string[], expiresAt: number): Promise<void> {
    return this.liveDeltas.advertiseLiveDeltas(origin, runIds, expiresAt);
  }
  retireLiveDeltas(origin: string, runIds?: readonly string[]): Promise<void> {
    return this.liveDeltas.retireLiveDeltas(origin, runIds);
  }
  listStreamedRuns(origin: string, now: number): Promise<string[]> {
    return this.liveDeltas.listStreamedRuns(origin, now);
  }
  writeLiveDeltas(origin: string, records: readonly NewLiveDelta[], now: number): Promise<void> {
    return this.liveDeltas.writeLiveDeltas(origin, records, now);
  }
  readLiveDeltas(runIds: readonly string[], afterId: number, origin: string, limit?: number): Promise<LiveDeltaRecord[]> {
    return this.liveDeltas.readLiveDeltas(runIds, afterId, origin, limit);
  }
  pruneLiveDeltas(before: number): Promise<number> {
    return this.liveDeltas.pruneLiveDeltas(before);
  }

  /** See {@link Store.onLiveDeltas}: called (in a microtask) after every write. */
  onLiveDeltas(listener: () => void): () => void {
    return this.liveDeltas.onLiveDeltas(listener);
  }
}
