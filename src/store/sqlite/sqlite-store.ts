import type { QueueStat } from "../../core/flow-control.js";
import { listRunEntries } from "./sqlite-run-entries.js";
import type { RunEntriesQuery, RunEntry, RunFilter } from "../../core/store.js";
import { resolve } from "node:path";
import type Database from "better-sqlite3";
import { HumanRequestAnsweredError, HumanRequestClosedError, HumanRequestNotFoundError, RunFinishedError, RunNotFoundError } from "../../core/errors.js";
import type { HumanAnswer, JournalEntry, NewEntry } from "../../core/journal.js";
import { isTerminal, type RunRecord, type RunStatus } from "../../core/run.js";
import { readForResume } from "../../core/resume.js";
import { encode } from "../../core/serialize.js";
import type {
  ClaimRequest,
  CommitResult,
  HumanRequest,
  ListHumanRequestsQuery,
  InboxEvent,
  ListRunsQuery,
  CopiedEntry,
  RunCount,
  NewInboxEvent,
  NewRun,
  PayloadBlob,
  RenewRequest,
  RunPage,
  RunWrite,
  Store,
  WorkerRecord,
  JournalTextHit,
  AuditEntry,
  ListAuditQuery,
  NewAuditEntry,
  TokenRecord,
  PruneQuery,
  RunImport,
  RunDeadline,
  RunValue,
  RunValueKind,
} from "../../core/store.js";
import type { ListOutboxQuery, OutboxClaimRequest, OutboxMessage, OutboxSettlement } from "../../core/outbox.js";
import { AUDIT_COLUMNS, TOKEN_COLUMNS, auditQuery, toAudit, toToken, tokenParams, type AuditRow, type TokenRow } from "../common/security-rows.js";
import { decodeCursor, encodeCursor, pageLimit } from "../common/list-query.js";
import type { ScheduleDefinitionRecord, ScheduleRecord, ScheduleState } from "../../core/schedule.js";
import * as schedules from "../common/schedule-rows.js";
import { queryTerms } from "../common/search-terms.js";
import { acceptedBlobs, referencedHashesSql } from "../common/blob-rows.js";
import { SqliteAgentRows } from "./sqlite-agent-rows.js";
import type { AgentMessageRow, ToolCallRow } from "../../core/store/agent-rows.js";
import { checkConsumable, humanRequestRow, isPlainAppend, planEntries, type SideEffect } from "../common/plan-write.js";
import { claimRun, copiedRun, fenceOut, fenceReason, newRunEntries, newRunRecord, wakePatch, type RunState } from "../common/run-state.js";
import { CAIRN_APPLICATION_ID, applyMigrations, latestSchemaVersion, schemaVersion } from "./sqlite-migrations.js";
import { openSqliteDatabase, type SqliteStoreOptions } from "./sqlite-open.js";
import { newDebouncedRun, rebounce } from "../common/debounce.js";
import { SqliteFlow } from "./sqlite-flow.js";
import { SqliteStepFlow } from "./sqlite-step-flow.js";
import type { StepSlotGrant, StepSlotRequest } from "../../core/step-flow.js";
import { SqliteOutbox } from "./sqlite-outbox.js";
import { SqliteQueries, claimParams } from "./sqlite-queries.js";
import { SqliteLive } from "./sqlite-live.js";
import { SqliteLiveDeltas } from "./sqlite-live-deltas.js";
import type { LiveDeltaRecord, NewLiveDelta } from "../../core/live-delta-store.js";
import { deleteRunRows, importRows, listPrunable, readRows } from "./sqlite-retention.js";
import { recoveryVerdict } from "../common/recovery.js";
import type { DrainedVersion, VersionCount } from "../../core/deploys.js";
import {
  ENTRY_COLUMNS,
  toEntry,
  toHuman,
  toRun,
  toState,
  toWorker,
  stateParams,
  runParams,
  workerParams,
  type EntryRow,
  type HumanRow,
  type InboxRow,
  type StateRow,
  type WorkerRow,
} from "./sqlite-rows.js";

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
 * The embedded {@link Store} on one SQLite file (better-sqlite3, WAL, `synchronous=FULL`).
 * Several worker processes may share the file: every write is one BEGIN IMMEDIATE
 * transaction, so claims and fenced appends serialise on SQLite's write lock.
 * Opening refuses, without modifying it, a file that is not a healthy Cairn store.
 *
 * @example
 * const store = new SqliteStore(".cairn/cairn.db");
 * await store.migrate();
 */
export class SqliteStore implements Store {
  /** `sqlite:<absolute path>` or `sqlite::memory:`. */
  readonly url: string;
  private readonly db: Database.Database;
  private prepared: SqliteQueries | undefined;
  private flowQueries: SqliteFlow | undefined;
  private stepFlowQueries: SqliteStepFlow | undefined;
  private liveQueries: SqliteLive | undefined;
  private liveDeltaQueries: SqliteLiveDeltas | undefined;
  private agentRowQueries: SqliteAgentRows | undefined;
  private outboxPrepared: SqliteOutbox | undefined;
  private readonly transaction: Database.Transaction<(fn: () => unknown) => unknown>;

  /**
   * Opens (creating if needed) the store at `path` (`":memory:"` for a private in-memory store).
   * Call {@link SqliteStore.migrate} before use.
   * @throws StoreInvalidError / SchemaTooNewError for a file it must not touch.
   */
  constructor(path: string, options: SqliteStoreOptions = {}) {
    const file = path === ":memory:" ? path : resolve(path);
    this.db = openSqliteDatabase(file, options);
    this.url = `sqlite:${file}`;
    this.transaction = this.db.transaction((fn: () => unknown) => fn());
  }

  /** See {@link Store.migrate}. */
  async migrate(): Promise<void> {
    applyMigrations(this.db);
    this.prepared = undefined;
    this.outboxPrepared = undefined;
  }

  /** See {@link Store.close}. */
  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }

  /** The connection's pragmas, e.g. to confirm WAL and `synchronous=FULL`. */
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

  /** See {@link Store.createRun}. */
  async createRun(run: NewRun, now: number): Promise<{ run: RunRecord; created: boolean }> {
    return this.immediate(() => {
      const existing = this.loadRun(run.runId);
      if (existing) return { run: existing, created: false };
      return { run: this.insertRun(run, now), created: true };
    });
  }

  /** See {@link Store.createRuns}. */
  async createRuns(runs: readonly NewRun[], now: number): Promise<{ run: RunRecord; created: boolean }[]> {
    return this.immediate(() =>
      runs.map((run) => {
        const existing = this.loadRun(run.runId);
        if (existing) return { run: existing, created: false };
        return { run: this.insertRun(run, now), created: true };
      }),
    );
  }

  /** See {@link Store.createRunWithJournal}. */
  async createRunWithJournal(run: NewRun, entries: readonly CopiedEntry[], now: number): Promise<{ run: RunRecord; created: boolean }> {
    return this.immediate(() => {
      const existing = this.loadRun(run.runId);
      if (existing) return { run: existing, created: false };
      const copied = copiedRun(run, entries, now);
      if (run.blobs) this.insertBlobs(run.blobs, now);
      this.q.insertRun.run(runParams(copied.run));
      this.insertEntries(copied.entries);
      for (const t of copied.texts) this.q.insertText.run(t.text, run.runId, t.seq, t.opKey);
      for (const rows of copied.agentRows) this.agentRows.apply(rows);
      return { run: copied.run, created: true };
    });
  }

  /** See {@link Store.listPrunableRuns}. */
  async listPrunableRuns(query: PruneQuery): Promise<RunRecord[]> {
    void this.q;
    return listPrunable(this.db, query);
  }

  /** See {@link Store.deleteRuns}. */
  async deleteRuns(runs: readonly { runId: string; lastSeq: number }[]): Promise<string[]> {
    void this.q;
    return deleteRunRows(this.db, runs);
  }

  /** See {@link Store.readRunRows}. */
  async readRunRows(runId: string): Promise<RunImport | undefined> {
    void this.q;
    return readRows(this.db, runId);
  }

  /** See {@link Store.importRun}. */
  async importRun(data: RunImport): Promise<void> {
    void this.q;
    importRows(this.db, data);
  }

  /** See {@link Store.listRunEntries}. */
  async listRunEntries(query: RunEntriesQuery): Promise<RunEntry[]> {
    return listRunEntries(this.db, query);
  }

  /** See {@link Store.countRuns}. */
  async countRuns(filter?: RunFilter): Promise<RunCount[]> {
    const rows =
      filter === undefined
        ? this.q.countRuns.all()
        : (({ statement, params }) => statement.all(...params))(this.q.countFiltered(filter, [...new Set(filter.status ?? [])]));
    return (rows as RunCount[]).map((row) => ({ workflow: row.workflow, status: row.status, count: Number(row.count) }));
  }

  /** See {@link Store.debounceRun}. */
  async debounceRun(run: NewRun, key: string, startAt: number, now: number): Promise<{ run: RunRecord; created: boolean }> {
    return this.immediate(() => {
      const found = this.flow.findDebounced(run.workflow, key);
      if (found !== undefined) {
        const next = rebounce(this.mustLoadRun(found), run.input, startAt, now);
        this.flow.rebounce(next.run);
        this.insertEntries([next.entry]);
        return { run: next.run, created: false };
      }
      const { record, entries } = newDebouncedRun(run, startAt, now);
      this.q.insertRun.run(runParams(record));
      this.flow.setDebounce(run.runId, key, run.flow);
      this.insertEntries(entries);
      return { run: record, created: true };
    });
  }

  /** See {@link Store.queueStats}. */
  async queueStats(now: number): Promise<QueueStat[]> {
    return this.flow.stats(now);
  }

  /** See {@link Store.getRun}. */
  async getRun(runId: string): Promise<RunRecord | undefined> {
    return this.loadRun(runId);
  }

  /** See {@link Store.listRuns}. */
  async listRuns(query: ListRunsQuery): Promise<RunPage> {
    const limit = pageLimit(query.limit);
    const cursor = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
    const { statement, params } = this.q.listRuns(query, [...new Set(query.status ?? [])], cursor, limit + 1);
    const rows = (statement.all(...params) as (StateRow & { input: string })[]).map(toRun);
    const runs = rows.slice(0, limit);
    const last = runs[runs.length - 1];
    return rows.length > limit && last ? { runs, nextCursor: encodeCursor(last) } : { runs };
  }

  /** See {@link Store.readJournal}. */
  async readJournal(runId: string, options: { afterSeq?: number; limit?: number } = {}): Promise<JournalEntry[]> {
    const limit = options.limit === undefined ? -1 : Math.max(0, options.limit);
    return (this.q.readJournal.all(runId, options.afterSeq ?? 0, limit) as EntryRow[]).map(toEntry);
  }

  /** See {@link Store.searchJournal}: FTS5, any of the query's words, ranked by bm25. */
  async searchJournal(runId: string, query: string, limit: number): Promise<JournalTextHit[]> {
    const terms = queryTerms(query);
    if (terms.length === 0) return [];
    const match = terms.map((term) => `"${term}"`).join(" OR ");
    return this.q.searchText.all(match, runId, Math.max(0, limit)) as JournalTextHit[];
  }

  /** See {@link Store.readJournalForResume}. */
  async readJournalForResume(runId: string): Promise<JournalEntry[]> {
    return readForResume({
      latestCheckpointBelow: async (below) => {
        const row = this.q.latestCheckpoint.get(runId, below) as EntryRow | undefined;
        return row && toEntry(row);
      },
      range: async (from, below) => (this.q.readJournalRange.all(runId, from, below) as EntryRow[]).map(toEntry),
      seqs: async (seqs) => (this.q.readJournalSeqs.all(runId, JSON.stringify(seqs)) as EntryRow[]).map(toEntry),
    });
  }

  /** See {@link Store.commit}. */
  async commit(writes: RunWrite[], now: number): Promise<CommitResult[]> {
    if (writes.length === 0) return [];
    return this.immediate(() => {
      // A step's outcome and the next step's intent come as two writes to one run. Plain appends
      // (common/plan-write isPlainAppend) keep the run's row here and write it once, at the end or
      // before any other kind of write, whose side effects may read or change rows.
      const held = new Map<string, { stored: RunState; run: RunState }>();
      const writeHeld = () => {
        for (const { stored, run } of held.values()) this.updateRow(stored, run);
        held.clear();
      };
      const results = writes.map((write): CommitResult => {
        const plain = write.entries.every(isPlainAppend);
        if (!plain) writeHeld();
        const cached = held.get(write.runId);
        const run = cached ? cached.run : this.loadState(write.runId);
        const refused = fenceReason(run, write.epoch);
        if (refused || !run) return { ok: false, reason: refused ?? "not-found" };
        const firstSeq = run.lastSeq + 1;
        if (write.entries.length > 0 && plain) {
          const plan = planEntries(run, write.epoch, write.entries, now);
          this.insertEntries(plan.entries);
          held.set(write.runId, { stored: cached?.stored ?? run, run: plan.run });
        } else if (write.entries.length > 0) {
          this.applyEntries(run, write.epoch, write.entries, now);
        }
        return { ok: true, firstSeq, lastSeq: run.lastSeq + write.entries.length };
      });
      writeHeld();
      this.insertBlobs(acceptedBlobs(writes, results), now);
      return results;
    });
  }

  /** See {@link Store.claimRuns}. */
  async claimRuns(request: ClaimRequest): Promise<RunRecord[]> {
    if (request.limit < 1 || request.workflows.length === 0) return [];
    // An idle worker polls often: look first with a plain read (WAL readers take no lock), and
    // open a write transaction only when there is something to claim.
    const queued = request.queues !== undefined && request.queues.length > 0;
    if (this.q.claim(request.workflows.length).get(...claimParams(request)) === undefined && !(queued && this.flow.anyDue(request))) return [];
    return this.immediate(() => {
      const found = this.q.claim(request.workflows.length).all(...claimParams(request)) as (StateRow & { claimKey: number })[];
      const unqueued = found.map(({ claimKey: _, ...row }) => row);
      const candidates = queued ? [...unqueued, ...this.flow.pick(request, request.limit - unqueued.length)] : unqueued;
      // Runs re-claimed after an abnormal end may go to the dead-letter state instead (see common/recovery.ts).
      const rows = candidates.filter((row) => {
        if (request.maxRecoveryAttempts === undefined || row.status !== "running") return true;
        return !this.deadOnRecovery(toState(row), request.maxRecoveryAttempts, request.now);
      });
      return rows.flatMap((row) => {
        const claimed = claimRun(toState(row), request);
        this.q.updateState.run(stateParams(claimed.run));
        this.insertEntries([claimed.entry]);
        return [this.mustLoadRun(row.runId)];
      });
    });
  }

  /** The dead-letter check of a run re-claimed after an abnormal end (see common/recovery.ts); true when it is now dead. */
  private deadOnRecovery(run: RunState, max: number, now: number): boolean {
    const attempt = this.q
      .prepared(
        `SELECT ${ENTRY_COLUMNS} FROM journal WHERE run_id = @id
           AND seq >= COALESCE((SELECT MAX(seq) FROM journal WHERE run_id = @id AND kind = 'run.claimed'), 0) ORDER BY seq`,
      )
      .all({ id: run.runId }) as EntryRow[];
    const stored = this.q.prepared("SELECT recovery_failures AS n FROM runs WHERE run_id = ?").get(run.runId) as { n: number };
    const verdict = recoveryVerdict(run, attempt.map(toEntry), stored.n, max, now);
    this.q.prepared("UPDATE runs SET recovery_failures = ? WHERE run_id = ?").run(verdict.failures, run.runId);
    if (!verdict.dead) return false;
    this.q.updateState.run(stateParams(verdict.dead.run));
    this.insertEntries([verdict.dead.entry]);
    this.q.closeHumans.run("dead", now, verdict.dead.run.runId);
    return true;
  }

  /** See {@link Store.countVersions}. */
  async countVersions(): Promise<VersionCount[]> {
    const rows = this.q
      .prepared("SELECT workflow, version, status, COUNT(*) AS count FROM runs GROUP BY workflow, version, status ORDER BY workflow, version, status")
      .all() as VersionCount[];
    return rows.map((row) => ({ workflow: row.workflow, version: row.version, status: row.status, count: Number(row.count) }));
  }

  /** See {@link Store.setVersionDrained}. */
  async setVersionDrained(workflow: string, version: string, drained: boolean, now: number): Promise<boolean> {
    const statement = drained
      ? this.q.prepared("INSERT INTO drained_versions (workflow, version, drained_at) VALUES (?, ?, ?) ON CONFLICT (workflow, version) DO NOTHING")
      : this.q.prepared("DELETE FROM drained_versions WHERE workflow = ? AND version = ?");
    return (drained ? statement.run(workflow, version, now) : statement.run(workflow, version)).changes > 0;
  }

  /** See {@link Store.listDrainedVersions}. */
  async listDrainedVersions(): Promise<DrainedVersion[]> {
    const rows = this.q
      .prepared("SELECT workflow, version, drained_at AS drainedAt FROM drained_versions ORDER BY workflow, version")
      .all() as DrainedVersion[];
    return rows.map((row) => ({ workflow: row.workflow, version: row.version, drainedAt: Number(row.drainedAt) }));
  }

  /** See {@link Store.renewLeases}. */
  async renewLeases(request: RenewRequest): Promise<string[]> {
    if (request.leases.length === 0) return [];
    return this.immediate(() =>
      request.leases.flatMap((lease) => {
        const renewed = this.q.renewLease.run(request.now + request.leaseMs, lease.runId, lease.epoch, request.workerId).changes > 0;
        return renewed ? [] : [lease.runId];
      }),
    );
  }

  /** See {@link Store.controlRun}. */
  async controlRun(runId: string, allowed: readonly RunStatus[], entry: NewEntry, now: number): Promise<{ run: RunRecord; applied: boolean }> {
    return this.immediate(() => {
      const run = this.loadState(runId);
      if (!run) throw new RunNotFoundError(runId);
      if (!allowed.includes(run.status)) return { run: this.mustLoadRun(runId), applied: false };
      const fenced = fenceOut(run);
      this.applyEntries(fenced, fenced.leaseEpoch, [entry], now, run);
      return { run: this.mustLoadRun(runId), applied: true };
    });
  }

  /** See {@link Store.sendEvent}. */
  async sendEvent(event: NewInboxEvent, now: number): Promise<{ duplicate: boolean }> {
    return this.immediate(() => {
      const run = this.loadState(event.runId);
      if (!run) throw new RunNotFoundError(event.runId);
      if (this.q.findInbox.get(event.runId, event.eventId)) return { duplicate: true };
      if (isTerminal(run.status)) throw new RunFinishedError(run.runId, run.status, `send event "${event.type}"`);
      if (event.blobs) this.insertBlobs(event.blobs, now);
      this.q.insertInbox.run(event.runId, event.type, event.eventId, event.payload, now);
      this.wake(run, now);
      return { duplicate: false };
    });
  }

  /** See {@link Store.acquireStepSlots}. */
  async acquireStepSlots(request: StepSlotRequest, now: number): Promise<StepSlotGrant> {
    return this.immediate(() => this.stepFlow.acquire(request, now));
  }

  /** See {@link Store.releaseStepSlots}. */
  async releaseStepSlots(runId: string, opKey: string, buckets: readonly string[], now: number): Promise<void> {
    return this.immediate(() => this.stepFlow.release(runId, opKey, buckets, now));
  }

  /** See {@link Store.pendingEvents}. */
  async pendingEvents(runId: string, type: string, limit?: number): Promise<InboxEvent[]> {
    return this.q.pendingEvents.all(runId, type, limit === undefined ? -1 : Math.max(0, limit)) as InboxRow[];
  }

  /** See {@link Store.listInbox}. */
  async listInbox(runId: string): Promise<InboxEvent[]> {
    return this.q.listInbox.all(runId) as InboxRow[];
  }

  /** See {@link Store.getHumanRequest}. */
  async getHumanRequest(requestId: string): Promise<HumanRequest | undefined> {
    const row = this.q.getHuman.get(requestId) as HumanRow | undefined;
    return row && toHuman(row);
  }

  /** See {@link Store.listHumanRequests}. */
  async listHumanRequests(query: ListHumanRequestsQuery): Promise<HumanRequest[]> {
    const { statement, params } = this.q.listHuman(query, pageLimit(query.limit, 1000));
    return (statement.all(...params) as HumanRow[]).map(toHuman);
  }

  /** See {@link Store.answerHuman}. */
  async answerHuman(requestId: string, answer: HumanAnswer, now: number): Promise<void> {
    this.immediate(() => {
      const request = this.q.getHuman.get(requestId) as HumanRow | undefined;
      if (!request) throw new HumanRequestNotFoundError(requestId);
      if (request.status === "closed") throw new HumanRequestClosedError(requestId, request.closedReason ?? "finished");
      if (request.status === "answered" || this.q.findInbox.get(request.runId, requestId)) throw new HumanRequestAnsweredError(requestId);
      const run = this.loadState(request.runId);
      if (!run) throw new RunNotFoundError(request.runId);
      if (isTerminal(run.status)) throw new RunFinishedError(run.runId, run.status, `answer human request "${requestId}"`);
      const payload = encode(answer);
      this.q.insertInbox.run(run.runId, `human:${requestId}`, requestId, payload, now);
      this.q.answerHuman.run(payload, now, requestId);
      this.wake(run, now);
    });
  }

  /** See {@link Store.claimOutbox}. */
  async claimOutbox(request: OutboxClaimRequest): Promise<OutboxMessage[]> {
    if (request.topics.length === 0 || !this.outbox.anyDue(request.now)) return [];
    return this.immediate(() => this.outbox.claim(request));
  }

  /** See {@link Store.settleOutbox}. */
  async settleOutbox(settlement: OutboxSettlement, now: number): Promise<boolean> {
    return this.outbox.settle(settlement, now);
  }

  /** See {@link Store.listOutbox}. */
  async listOutbox(query: ListOutboxQuery): Promise<OutboxMessage[]> {
    return this.outbox.list(query);
  }

  /** See {@link Store.getOutboxMessage}. */
  async getOutboxMessage(messageId: string): Promise<OutboxMessage | undefined> {
    return this.outbox.find(messageId);
  }

  /** See {@link Store.retryOutbox}. */
  async retryOutbox(messageId: string, now: number): Promise<{ message: OutboxMessage; applied: boolean }> {
    return this.immediate(() => this.outbox.requeue(messageId, now));
  }

  /** See {@link Store.upsertWorker}. */
  async upsertWorker(worker: WorkerRecord): Promise<void> {
    this.q.upsertWorker.run(workerParams(worker));
  }

  /** See {@link Store.removeWorker}. */
  async removeWorker(workerId: string): Promise<void> {
    this.q.removeWorker.run(workerId);
  }

  /** See {@link Store.listWorkers}. */
  async listWorkers(since: number): Promise<WorkerRecord[]> {
    return (this.q.listWorkers.all(since) as WorkerRow[]).map(toWorker);
  }

  /** See {@link Store.createToken}. */
  async createToken(token: TokenRecord): Promise<void> {
    this.q.prepared(`INSERT INTO tokens (${TOKEN_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`).run(...tokenParams(token));
  }

  /** See {@link Store.listTokens}. */
  async listTokens(): Promise<TokenRecord[]> {
    return (this.q.prepared(`SELECT ${TOKEN_COLUMNS} FROM tokens ORDER BY created_at DESC, id DESC`).all() as TokenRow[]).map(toToken);
  }

  /** See {@link Store.getToken}. */
  async getToken(id: string): Promise<TokenRecord | undefined> {
    const row = this.q.prepared(`SELECT ${TOKEN_COLUMNS} FROM tokens WHERE id = ?`).get(id) as TokenRow | undefined;
    return row && toToken(row);
  }

  /** See {@link Store.revokeToken}. */
  async revokeToken(id: string, now: number): Promise<boolean> {
    return this.q.prepared("UPDATE tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL").run(now, id).changes === 1;
  }

  /** See {@link Store.appendAudit}. */
  async appendAudit(entry: NewAuditEntry): Promise<AuditEntry> {
    const row = this.q
      .prepared(`INSERT INTO audit_log (at, actor, action, target, detail) VALUES (?, ?, ?, ?, ?) RETURNING ${AUDIT_COLUMNS}`)
      .get(entry.at, entry.actor, entry.action, entry.target, entry.detail === null ? null : JSON.stringify(entry.detail)) as AuditRow;
    return toAudit(row);
  }

  /** See {@link Store.listAudit}. */
  async listAudit(query: ListAuditQuery): Promise<AuditEntry[]> {
    const { text, params } = auditQuery(query, () => "?");
    return (this.q.prepared(text).all(...params) as AuditRow[]).map(toAudit);
  }

  /** See {@link Store.saveSchedule}. */
  async saveSchedule(definition: ScheduleDefinitionRecord, now: number): Promise<ScheduleRecord> {
    return this.immediate(() => {
      const stored = this.loadSchedule(definition.name);
      const statement = !stored
        ? schedules.insertSchedule(sqliteMarker, definition, now)
        : schedules.sameDefinition(stored, definition)
          ? undefined
          : schedules.redefineSchedule(sqliteMarker, definition, now);
      if (statement) this.q.prepared(statement.sql).run(sqliteParams(statement.params));
      return this.loadSchedule(definition.name)!;
    });
  }

  /** See {@link Store.getSchedule}. */
  async getSchedule(name: string): Promise<ScheduleRecord | undefined> {
    return this.loadSchedule(name);
  }

  /** See {@link Store.listSchedules}. */
  async listSchedules(): Promise<ScheduleRecord[]> {
    return (this.q.prepared(`SELECT ${schedules.SCHEDULE_COLUMNS} FROM schedules ORDER BY name`).all() as schedules.ScheduleRow[]).map(schedules.toSchedule);
  }

  /** See {@link Store.deleteSchedule}. */
  async deleteSchedule(name: string): Promise<boolean> {
    return this.q.prepared("DELETE FROM schedules WHERE name = ?").run(name).changes === 1;
  }

  /** See {@link Store.claimSchedule}. */
  async claimSchedule(name: string, owner: string, now: number, leaseMs: number): Promise<ScheduleRecord | undefined> {
    const statement = schedules.claimScheduleSql(sqliteMarker, sqliteFlag, name, owner, now, leaseMs);
    const row = this.q.prepared(statement.sql).get(sqliteParams(statement.params)) as schedules.ScheduleRow | undefined;
    return row && schedules.toSchedule(row);
  }

  /** See {@link Store.updateScheduleState}. */
  async updateScheduleState(name: string, owner: string, epoch: number, state: ScheduleState, now: number): Promise<boolean> {
    const statement = schedules.updateStateSql(sqliteMarker, name, owner, epoch, state, now);
    return this.q.prepared(statement.sql).run(sqliteParams(statement.params)).changes === 1;
  }

  /** See {@link Store.setSchedulePaused}. */
  async setSchedulePaused(name: string, paused: boolean, now: number): Promise<ScheduleRecord | undefined> {
    const statement = schedules.setPausedSql(sqliteMarker, sqliteFlag, name, paused, now);
    const row = this.q.prepared(statement.sql).get(sqliteParams(statement.params)) as schedules.ScheduleRow | undefined;
    return row && schedules.toSchedule(row);
  }

  private loadSchedule(name: string): ScheduleRecord | undefined {
    const row = this.q.prepared(`SELECT ${schedules.SCHEDULE_COLUMNS} FROM schedules WHERE name = ?`).get(name) as schedules.ScheduleRow | undefined;
    return row && schedules.toSchedule(row);
  }

  /** See {@link Store.listStuckRuns}. */
  async listStuckRuns(now: number, graceMs: number, limit?: number): Promise<RunRecord[]> {
    const rows = this.q.stuckRuns.all({ before: now - graceMs, limit: pageLimit(limit) }) as (StateRow & { input: string })[];
    return rows.map(toRun);
  }

  /** See {@link Store.readBlobs}. */
  async readBlobs(hashes: readonly string[]): Promise<PayloadBlob[]> {
    if (hashes.length === 0) return [];
    return this.q.prepared("SELECT hash, size, body FROM blobs WHERE hash IN (SELECT value FROM json_each(?))").all(JSON.stringify(hashes)) as PayloadBlob[];
  }

  /** See {@link Store.deleteUnreferencedBlobs}. */
  async deleteUnreferencedBlobs(before: number): Promise<number> {
    return this.immediate(() => this.q.prepared(`DELETE FROM blobs WHERE used_at < ? AND hash NOT IN (${referencedHashesSql()})`).run(before).changes);
  }

  /** Inserts blobs, or marks existing ones used (content-addressed: same hash, same text). */
  private insertBlobs(blobs: readonly PayloadBlob[], now: number): void {
    if (blobs.length === 0) return;
    const statement = this.q.prepared(
      "INSERT INTO blobs (hash, size, body, created_at, used_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (hash) DO UPDATE SET used_at = excluded.used_at",
    );
    for (const blob of blobs) statement.run(blob.hash, blob.size, blob.body, now, now);
  }

  private get q(): SqliteQueries {
    if (!this.prepared) {
      const found = schemaVersion(this.db);
      if (found !== latestSchemaVersion() || this.db.pragma("application_id", { simple: true }) !== CAIRN_APPLICATION_ID) {
        throw new Error(`The store ${this.url} has schema version ${found}, not ${latestSchemaVersion()}: call migrate() before using it (openStore does).`);
      }
      this.prepared = new SqliteQueries(this.db);
    }
    return this.prepared;
  }

  /** Flow-control statements, prepared on first use (never on the unqueued paths). */
  /** Step flow control (prepared on first use); wakes a waiter like an event does. */
  private get stepFlow(): SqliteStepFlow {
    return (this.stepFlowQueries ??= new SqliteStepFlow(this.db, (runId, now) => {
      const run = this.loadState(runId);
      if (run) this.wake(run, now);
    }));
  }

  private get flow(): SqliteFlow {
    return (this.flowQueries ??= new SqliteFlow(this.db));
  }

  private get outbox(): SqliteOutbox {
    if (!this.outboxPrepared) {
      void this.q; // checks the schema version first
      this.outboxPrepared = new SqliteOutbox(this.db);
    }
    return this.outboxPrepared;
  }

  private immediate<T>(fn: () => T): T {
    return this.transaction.immediate(fn) as T;
  }

  private loadState(runId: string): RunState | undefined {
    const row = this.q.getState.get(runId) as StateRow | undefined;
    return row && toState(row);
  }

  private loadRun(runId: string): RunRecord | undefined {
    const row = this.q.getRun.get(runId) as (StateRow & { input: string }) | undefined;
    return row && toRun(row);
  }

  private mustLoadRun(runId: string): RunRecord {
    const run = this.loadRun(runId);
    if (!run) throw new RunNotFoundError(runId);
    return run;
  }

  private insertRun(run: NewRun, now: number): RunRecord {
    if (run.blobs) this.insertBlobs(run.blobs, now);
    const entries = newRunEntries(run, now);
    const record = newRunRecord(run, now);
    this.q.insertRun.run(runParams(record));
    if (run.flow) this.flow.setFlow(run.runId, run.flow);
    if (run.tags || run.deadlineAt !== undefined) this.live.insert(run);
    this.insertEntries(entries);
    return record;
  }

  /** Tags, values and deadlines statements, prepared on first use. */
  private get live(): SqliteLive {
    // Reading `q` first checks the schema version, so a store that was never migrated says so.
    if (!this.liveQueries && this.q) this.liveQueries = new SqliteLive(this.db);
    return this.liveQueries!;
  }

  /** Agent message and tool call statements, prepared on first use. */
  private get agentRows(): SqliteAgentRows {
    if (!this.agentRowQueries && this.q) this.agentRowQueries = new SqliteAgentRows(this.db);
    return this.agentRowQueries!;
  }

  /** See {@link Store.readAgentMessages}. */
  async readAgentMessages(runId: string, options?: { fromSeq?: number; throughSeq?: number; limit?: number }): Promise<AgentMessageRow[]> {
    return this.agentRows.read(runId, options);
  }

  /** See {@link Store.listToolCalls}. */
  async listToolCalls(runId: string): Promise<ToolCallRow[]> {
    return this.agentRows.toolCalls(runId);
  }

  /** Live-delta statements, prepared on first use. */
  private get liveDeltas(): SqliteLiveDeltas {
    if (!this.liveDeltaQueries && this.q) this.liveDeltaQueries = new SqliteLiveDeltas(this.db);
    return this.liveDeltaQueries!;
  }

  /** See {@link Store.advertiseLiveDeltas}. */
  async advertiseLiveDeltas(origin: string, runIds: readonly string[], expiresAt: number): Promise<void> {
    this.liveDeltas.advertiseRuns(origin, runIds, expiresAt);
  }

  /** See {@link Store.retireLiveDeltas}. */
  async retireLiveDeltas(origin: string, runIds?: readonly string[]): Promise<void> {
    this.liveDeltas.retire(origin, runIds);
  }

  /** See {@link Store.listStreamedRuns}. */
  async listStreamedRuns(origin: string, now: number): Promise<string[]> {
    return this.liveDeltas.streamedRuns(origin, now);
  }

  /** See {@link Store.writeLiveDeltas}. Does not wait for fsync: deltas are ephemeral. */
  async writeLiveDeltas(origin: string, records: readonly NewLiveDelta[], now: number): Promise<void> {
    this.liveDeltas.write(origin, records, now);
  }

  /** See {@link Store.readLiveDeltas}. */
  async readLiveDeltas(runIds: readonly string[], afterId: number, origin: string, limit = 1000): Promise<LiveDeltaRecord[]> {
    return this.liveDeltas.read(runIds, afterId, origin, limit);
  }

  /** See {@link Store.pruneLiveDeltas}. */
  async pruneLiveDeltas(before: number): Promise<number> {
    return this.liveDeltas.pruneBefore(before);
  }

  /** See {@link Store.getRunTags}. */
  async getRunTags(runId: string): Promise<Record<string, string>> {
    return this.live.tags(runId);
  }

  /** See {@link Store.getRunValue}. */
  async getRunValue(runId: string, kind: RunValueKind, name: string): Promise<RunValue | undefined> {
    return this.live.getValue(runId, kind, name);
  }

  /** See {@link Store.listDueDeadlines}. */
  async listDueDeadlines(now: number, limit: number): Promise<RunDeadline[]> {
    return this.live.dueDeadlines(now, limit);
  }

  /** See {@link Store.clearDeadline}. */
  async clearDeadline(runId: string): Promise<boolean> {
    return this.live.clearDeadline(runId);
  }

  private insertEntries(entries: readonly JournalEntry[]): void {
    for (const e of entries) this.q.insertEntry.run(e.runId, e.seq, e.kind, e.opKey, e.payload, e.epoch, e.at);
  }

  /** `stored` is the row as the database holds it, when `run` already differs from it. */
  private applyEntries(run: RunState, epoch: number, entries: readonly NewEntry[], now: number, stored: RunState = run): void {
    const plan = planEntries(run, epoch, entries, now);
    this.updateRow(stored, plan.run);
    this.insertEntries(plan.entries);
    for (const effect of plan.effects) this.applyEffect(effect, now);
  }

  /** Writes `next` over the row the database holds as `stored`. */
  private updateRow(stored: RunState, next: RunState): void {
    if (onlySeqAdvanced(stored, next)) this.q.advanceSeq.run(next.lastSeq, next.updatedAt, next.runId);
    else this.q.updateState.run(stateParams(next));
  }

  private applyEffect(effect: SideEffect, now: number): void {
    switch (effect.kind) {
      case "consume-inbox": {
        checkConsumable(effect, this.q.getInbox.get(effect.inboxId) as InboxRow | undefined);
        this.q.consumeInbox.run(effect.seq, effect.inboxId);
        return;
      }
      case "answer-human":
        this.q.answerHuman.run(effect.answer, effect.at, effect.requestId);
        return;
      case "create-run":
        if (!this.q.getState.get(effect.run.runId)) this.insertRun(effect.run, now);
        return;
      case "put-value":
        this.live.putValue(effect);
        return;
      case "request-human":
        this.q.insertHuman.run(...humanRequestRow(effect.request));
        return;
      case "wake": {
        const run = this.loadState(effect.runId);
        if (run) this.wake(run, now);
        return;
      }
      case "index-text":
        this.q.insertText.run(effect.text, effect.runId, effect.seq, effect.opKey);
        return;
      case "extend-human":
        this.q.extendHuman.run(effect.timeoutAt, effect.requestId);
        return;
      case "insert-outbox":
        this.outbox.insertMessage(effect.message);
        return;
      case "close-humans":
        this.q.closeHumans.run(effect.reason, effect.at, effect.runId);
        return;
      case "reopen-humans":
        this.q.reopenHumans.run(effect.runId);
        return;
      case "agent-rows":
        this.agentRows.apply(effect.rows);
        return;
    }
  }

  private wake(run: RunState, now: number): void {
    const patch = wakePatch(run, now);
    if (patch) this.q.updateState.run(stateParams({ ...run, ...patch }));
  }
}

/** True when `next` differs from `run` only in `lastSeq` and `updatedAt`. */
function onlySeqAdvanced(run: RunState, next: RunState): boolean {
  for (const key of Object.keys(next) as (keyof RunState)[]) {
    if (key !== "lastSeq" && key !== "updatedAt" && next[key] !== run[key]) return false;
  }
  return true;
}

const sqliteMarker = (n: number): string => `@p${n}`;
const sqliteFlag = (b: boolean): number => (b ? 1 : 0);
/** Positional parameters as the named `@p1, @p2, …` that {@link sqliteMarker} writes (better-sqlite3 binds `?NNN` poorly). */
function sqliteParams(params: readonly unknown[]): Record<string, unknown> {
  return Object.fromEntries(params.map((value, i) => [`p${i + 1}`, value]));
}
