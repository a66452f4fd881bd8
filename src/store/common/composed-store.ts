import type { CompactionOutcome, CompactionPlan, JournalCompaction } from "../../core/compaction.js";
import type { QueueStat } from "../../core/flow-control.js";
import type { DrainedVersion, VersionCount } from "../../core/deploys.js";
import type { HumanAnswer, JournalEntry, NewEntry } from "../../core/journal.js";
import type { LiveDeltaRecord, LiveDeltaStore, NewLiveDelta } from "../../core/live-delta-store.js";
import type { ListOutboxQuery, OutboxClaimRequest, OutboxMessage, OutboxSettlement } from "../../core/outbox.js";
import type { RunRecord, RunStatus } from "../../core/run.js";
import type { ScheduleDefinitionRecord, ScheduleRecord, ScheduleState } from "../../core/schedule.js";
import type { StepSlotGrant, StepSlotRequest } from "../../core/step-flow.js";
import type * as S from "../../core/store.js";

/** The entity modules of one store, one per slice of the {@link Store} port (`core/store/`), for {@link ComposedStore}. */
export interface StoreEntities {
  runs: S.RunStore;
  journal: S.JournalStore;
  leases: S.LeaseStore;
  inbox: S.InboxStore;
  humanRequests: S.HumanRequestStore;
  outbox: S.OutboxStore;
  operations: S.OperationsStore;
  security: S.SecurityStore;
  retention: S.RetentionStore;
  schedules: S.ScheduleStore;
  blobs: S.BlobStore;
  stepSlots: S.StepSlotStore;
  liveRuns: S.LiveRunStore;
  liveDeltas: LiveDeltaStore;
  agentRows: S.AgentRowStore;
}

/**
 * A {@link Store} made of its entity modules: every method of the port forwards to the module of its
 * entity (one method call, no allocation). The memory, SQLite and PostgreSQL stores extend it, each
 * passing its own modules (`<backend>-runs.ts`, `<backend>-journal.ts`, …) and adding its connection
 * (`url`, `migrate`, `close`) and the optional members it supports (`now`, `onWake`, `onJournal`, …).
 * A new entity is one more field of {@link StoreEntities}, its forwarders here and one module per backend.
 */
export abstract class ComposedStore implements S.Store {
  abstract readonly url: string;
  abstract migrate(): Promise<void>;
  abstract close(): Promise<void>;
  private readonly runs: S.RunStore;
  private readonly journal: S.JournalStore;
  private readonly leases: S.LeaseStore;
  private readonly inbox: S.InboxStore;
  private readonly humanRequests: S.HumanRequestStore;
  private readonly outbox: S.OutboxStore;
  private readonly operations: S.OperationsStore;
  private readonly security: S.SecurityStore;
  private readonly retention: S.RetentionStore;
  private readonly schedules: S.ScheduleStore;
  private readonly blobs: S.BlobStore;
  private readonly stepSlots: S.StepSlotStore;
  private readonly liveRuns: S.LiveRunStore;
  private readonly liveDeltas: LiveDeltaStore;
  private readonly agentRows: S.AgentRowStore;

  constructor(entities: StoreEntities) {
    this.runs = entities.runs;
    this.journal = entities.journal;
    this.leases = entities.leases;
    this.inbox = entities.inbox;
    this.humanRequests = entities.humanRequests;
    this.outbox = entities.outbox;
    this.operations = entities.operations;
    this.security = entities.security;
    this.retention = entities.retention;
    this.schedules = entities.schedules;
    this.blobs = entities.blobs;
    this.stepSlots = entities.stepSlots;
    this.liveRuns = entities.liveRuns;
    this.liveDeltas = entities.liveDeltas;
    this.agentRows = entities.agentRows;
  }

  // Runs
  createRun(run: S.NewRun, now: number): Promise<{ run: RunRecord; created: boolean }> {
    return this.runs.createRun(run, now);
  }
  createRuns(runs: readonly S.NewRun[], now: number): Promise<{ run: RunRecord; created: boolean }[]> {
    return this.runs.createRuns(runs, now);
  }
  createRunWithJournal(
    run: S.NewRun,
    entries: readonly S.CopiedEntry[],
    now: number,
    compaction?: JournalCompaction,
  ): Promise<{ run: RunRecord; created: boolean }> {
    return this.runs.createRunWithJournal(run, entries, now, compaction);
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

  // The journal
  readJournal(runId: string, options?: { afterSeq?: number; limit?: number }): Promise<JournalEntry[]> {
    return this.journal.readJournal(runId, options);
  }
  readJournalForResume(runId: string): Promise<JournalEntry[]> {
    return this.journal.readJournalForResume(runId);
  }
  searchJournal(runId: string, query: string, limit: number): Promise<S.JournalTextHit[]> {
    return this.journal.searchJournal(runId, query, limit);
  }
  commit(writes: S.RunWrite[], now: number): Promise<S.CommitResult[]> {
    return this.journal.commit(writes, now);
  }

  // Leases
  claimRuns(request: S.ClaimRequest): Promise<RunRecord[]> {
    return this.leases.claimRuns(request);
  }
  renewLeases(request: S.RenewRequest): Promise<string[]> {
    return this.leases.renewLeases(request);
  }
  controlRun(runId: string, allowed: readonly RunStatus[], entry: NewEntry, now: number): Promise<{ run: RunRecord; applied: boolean }> {
    return this.leases.controlRun(runId, allowed, entry, now);
  }

  // The inbox and human requests
  sendEvent(event: S.NewInboxEvent, now: number): Promise<{ duplicate: boolean; runId?: string }> {
    return this.inbox.sendEvent(event, now);
  }
  pendingEvents(runId: string, type: string, limit?: number): Promise<S.InboxEvent[]> {
    return this.inbox.pendingEvents(runId, type, limit);
  }
  listInbox(runId: string): Promise<S.InboxEvent[]> {
    return this.inbox.listInbox(runId);
  }
  getHumanRequest(requestId: string): Promise<S.HumanRequest | undefined> {
    return this.humanRequests.getHumanRequest(requestId);
  }
  listHumanRequests(query: S.ListHumanRequestsQuery): Promise<S.HumanRequest[]> {
    return this.humanRequests.listHumanRequests(query);
  }
  answerHuman(requestId: string, answer: HumanAnswer, now: number): Promise<void> {
    return this.humanRequests.answerHuman(requestId, answer, now);
  }

  // The outbox
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

  // Operations
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

  // Security
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

  // Retention
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
  listCompactableRuns(query: S.CompactQuery): Promise<S.CompactCandidate[]> {
    return this.retention.listCompactableRuns(query);
  }
  compactJournal(runId: string, plan: CompactionPlan, now: number): Promise<CompactionOutcome | undefined> {
    return this.retention.compactJournal(runId, plan, now);
  }
  readCompaction(runId: string): Promise<JournalCompaction | undefined> {
    return this.retention.readCompaction(runId);
  }

  // Schedules
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

  // Blobs and step slots
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

  // Live runs: tags, values, deadlines
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

  // Live deltas
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

  // Agent message and tool call rows
  readAgentMessages(runId: string, options?: { fromSeq?: number; throughSeq?: number; limit?: number }): Promise<S.AgentMessageRow[]> {
    return this.agentRows.readAgentMessages(runId, options);
  }
  listToolCalls(runId: string): Promise<S.ToolCallRow[]> {
    return this.agentRows.listToolCalls(runId);
  }
}
