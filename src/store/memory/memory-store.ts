import type { ScheduleDefinitionRecord, ScheduleRecord, ScheduleState } from "../../core/schedule.js";
import { listRunEntries } from "./memory-run-entries.js";
import type { RunEntriesQuery, RunEntry, RunFilter } from "../../core/store.js";
import { MemorySchedules } from "./memory-schedules.js";
import type { QueueStat } from "../../core/flow-control.js";
import { HumanRequestAnsweredError, HumanRequestClosedError, HumanRequestNotFoundError, RunFinishedError, RunNotFoundError } from "../../core/errors.js";
import type { HumanAnswer, JournalEntry, NewEntry } from "../../core/journal.js";
import { isTerminal, type RunRecord, type RunStatus } from "../../core/run.js";
import { isCheckpoint, readForResume } from "../../core/resume.js";
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
import { compareText, decodeCursor, encodeCursor, pageLimit } from "../common/list-query.js";
import { queryTerms } from "../common/search-terms.js";
import { checkConsumable, planEntries, type SideEffect } from "../common/plan-write.js";
import { claimKey, claimRun, copiedRun, fenceOut, fenceReason, isClaimable, isStuck, newRunEntries, newRunRecord, wakePatch } from "../common/run-state.js";
import { MemoryLive } from "./memory-live.js";
import { applyAgentRows, listToolCalls, readAgentMessages } from "./memory-agent-rows.js";
import type { AgentMessageRow, ToolCallRow } from "../../core/store/agent-rows.js";
import { MemoryLiveDeltas } from "./memory-live-deltas.js";
import type { LiveDeltaRecord, NewLiveDelta } from "../../core/live-delta-store.js";
import { deleteRunRows, importRows, listPrunable, readRows } from "./memory-retention.js";
import { newDebouncedRun, rebounce } from "../common/debounce.js";
import { MemoryFlow } from "./memory-flow.js";
import type { ListOutboxQuery, OutboxClaimRequest, OutboxMessage, OutboxSettlement } from "../../core/outbox.js";
import { MemoryOutbox } from "./memory-outbox.js";
import { MemoryTables } from "./memory-tables.js";
import { MemoryStepFlow } from "./memory-step-flow.js";
import type { StepSlotGrant, StepSlotRequest } from "../../core/step-flow.js";
import { BLOB_REF_PREFIX } from "../../core/payloads.js";
import { recoveryVerdict } from "../common/recovery.js";
import type { DrainedVersion, VersionCount } from "../../core/deploys.js";

/**
 * The reference {@link Store}: plain maps in one process, nothing durable.
 * It keeps exactly the rules of the SQLite and PostgreSQL stores (it passes the
 * same conformance suite), so it is the fastest way to test workflows.
 * Every method runs synchronously to completion, so each one is atomic.
 *
 * @example
 * const store = new MemoryStore();
 * await store.createRun({ runId: "r1", workflow: "hello", version: "1", input: encode({}) }, Date.now());
 */
export class MemoryStore implements Store {
  /** Always `memory:`. */
  readonly url = "memory:";
  private readonly t = new MemoryTables();
  private readonly schedules = new MemorySchedules();
  private readonly flow = new MemoryFlow();
  private readonly stepFlow = new MemoryStepFlow(this.t.runs, (runId, now) => this.wake(runId, now));
  private readonly outbox = new MemoryOutbox(this.t);
  private readonly drained = new Map<string, DrainedVersion>();
  private readonly recoveryFailures = new Map<string, number>();
  private readonly live = new MemoryLive(this.t);
  private readonly liveDeltas = new MemoryLiveDeltas();

  /** See {@link Store.advertiseLiveDeltas}. */
  advertiseLiveDeltas(origin: string, runIds: readonly string[], expiresAt: number): Promise<void> {
    return this.liveDeltas.advertiseLiveDeltas(origin, runIds, expiresAt);
  }

  /** See {@link Store.retireLiveDeltas}. */
  retireLiveDeltas(origin: string, runIds?: readonly string[]): Promise<void> {
    return this.liveDeltas.retireLiveDeltas(origin, runIds);
  }

  /** See {@link Store.listStreamedRuns}. */
  listStreamedRuns(origin: string, now: number): Promise<string[]> {
    return this.liveDeltas.listStreamedRuns(origin, now);
  }

  /** See {@link Store.writeLiveDeltas}. */
  writeLiveDeltas(origin: string, records: readonly NewLiveDelta[], now: number): Promise<void> {
    return this.liveDeltas.writeLiveDeltas(origin, records, now);
  }

  /** See {@link Store.readLiveDeltas}. */
  readLiveDeltas(runIds: readonly string[], afterId: number, origin: string, limit?: number): Promise<LiveDeltaRecord[]> {
    return this.liveDeltas.readLiveDeltas(runIds, afterId, origin, limit);
  }

  /** See {@link Store.pruneLiveDeltas}. */
  pruneLiveDeltas(before: number): Promise<number> {
    return this.liveDeltas.pruneLiveDeltas(before);
  }

  /** See {@link Store.onLiveDeltas}: called (in a microtask) after every write. */
  onLiveDeltas(listener: () => void): () => void {
    return this.liveDeltas.onLiveDeltas(listener);
  }

  /** Nothing to create. */
  async migrate(): Promise<void> {}

  /** Nothing to release. */
  async close(): Promise<void> {}

  /** See {@link Store.createRun}. */
  async createRun(run: NewRun, now: number): Promise<{ run: RunRecord; created: boolean }> {
    return this.t.atomic(() => {
      const existing = this.t.runs.get(run.runId);
      if (existing) return { run: { ...existing }, created: false };
      return { run: { ...this.insertRun(run, now) }, created: true };
    });
  }

  /** See {@link Store.createRuns}. */
  async createRuns(runs: readonly NewRun[], now: number): Promise<{ run: RunRecord; created: boolean }[]> {
    return this.t.atomic(() =>
      runs.map((run) => {
        const existing = this.t.runs.get(run.runId);
        if (existing) return { run: { ...existing }, created: false };
        return { run: { ...this.insertRun(run, now) }, created: true };
      }),
    );
  }

  /** See {@link Store.createRunWithJournal}. */
  async createRunWithJournal(run: NewRun, entries: readonly CopiedEntry[], now: number): Promise<{ run: RunRecord; created: boolean }> {
    return this.t.atomic(() => {
      const existing = this.t.runs.get(run.runId);
      if (existing) return { run: { ...existing }, created: false };
      const copied = copiedRun(run, entries, now);
      for (const t of copied.texts) this.t.putText(run.runId, t.seq, t.text);
      this.t.putBlobs(run.blobs, now);
      this.t.putRun(copied.run);
      this.t.append(copied.entries);
      for (const rows of copied.agentRows) applyAgentRows(this.t, rows);
      return { run: { ...copied.run }, created: true };
    });
  }

  /** See {@link Store.listPrunableRuns}. */
  async listPrunableRuns(query: PruneQuery): Promise<RunRecord[]> {
    return listPrunable(this.t, query);
  }

  /** See {@link Store.deleteRuns}. */
  async deleteRuns(runs: readonly { runId: string; lastSeq: number }[]): Promise<string[]> {
    const deleted = deleteRunRows(this.t, runs);
    for (const runId of deleted) this.live.forget(runId);
    return deleted;
  }

  /** See {@link Store.readRunRows}. */
  async readRunRows(runId: string): Promise<RunImport | undefined> {
    return readRows(this.t, runId);
  }

  /** See {@link Store.readAgentMessages}. */
  async readAgentMessages(runId: string, options?: { fromSeq?: number; throughSeq?: number; limit?: number }): Promise<AgentMessageRow[]> {
    return readAgentMessages(this.t, runId, options);
  }

  /** See {@link Store.listToolCalls}. */
  async listToolCalls(runId: string): Promise<ToolCallRow[]> {
    return listToolCalls(this.t, runId);
  }

  /** See {@link Store.importRun}. */
  async importRun(data: RunImport): Promise<void> {
    importRows(this.t, data);
  }

  /** See {@link Store.listRunEntries}. */
  async listRunEntries(query: RunEntriesQuery): Promise<RunEntry[]> {
    return listRunEntries(this.t, query);
  }

  /** See {@link Store.countRuns}. */
  async countRuns(filter?: RunFilter): Promise<RunCount[]> {
    const counts = new Map<string, RunCount>();
    for (const run of this.t.runs.values()) {
      if (filter !== undefined && !this.matchesFilter(run, filter)) continue;
      const key = `${run.status}\u0000${run.workflow}`;
      const found = counts.get(key);
      if (found) found.count += 1;
      else counts.set(key, { workflow: run.workflow, status: run.status, count: 1 });
    }
    return [...counts.values()].sort((a, b) => compareText(a.workflow, b.workflow) || compareText(a.status, b.status));
  }

  /** See {@link Store.debounceRun}. */
  async debounceRun(run: NewRun, key: string, startAt: number, now: number): Promise<{ run: RunRecord; created: boolean }> {
    return this.t.atomic(() => {
      const found = [...this.t.runs.values()].find((r) => r.workflow === run.workflow && r.leaseEpoch === 0 && this.flow.debounceKey(r.runId) === key);
      if (found) {
        const next = rebounce(found, run.input, startAt, now);
        this.t.putRun(next.run);
        this.t.append([next.entry]);
        return { run: { ...next.run }, created: false };
      }
      const { record, entries } = newDebouncedRun(run, startAt, now);
      this.t.putRun(record);
      this.flow.setDebounce(run.runId, key, run.flow);
      this.t.append(entries);
      return { run: { ...record }, created: true };
    });
  }

  /** See {@link Store.queueStats}. */
  async queueStats(now: number): Promise<QueueStat[]> {
    return this.flow.stats([...this.t.runs.values()], now);
  }

  /** See {@link Store.getRun}. */
  async getRun(runId: string): Promise<RunRecord | undefined> {
    const run = this.t.runs.get(runId);
    return run && { ...run };
  }

  /** See {@link Store.listRuns}. */
  async listRuns(query: ListRunsQuery): Promise<RunPage> {
    const limit = pageLimit(query.limit);
    const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
    const matches = [...this.t.runs.values()].filter(
      (run) =>
        this.matchesFilter(run, query) &&
        (!after || run.createdAt < after.createdAt || (run.createdAt === after.createdAt && compareText(run.runId, after.runId) < 0)),
    );
    matches.sort((a, b) => b.createdAt - a.createdAt || compareText(b.runId, a.runId));
    const runs = matches.slice(0, limit).map((run) => ({ ...run }));
    const last = runs[runs.length - 1];
    return matches.length > limit && last ? { runs, nextCursor: encodeCursor(last) } : { runs };
  }

  /** The run passes every filter of `query` (a listing's or a count's). */
  private matchesFilter(run: RunRecord, query: RunFilter): boolean {
    const statuses = query.status ?? [];
    return (
      (statuses.length === 0 || statuses.includes(run.status)) &&
      (query.workflow === undefined || run.workflow === query.workflow) &&
      (query.parentRunId === undefined || run.parentRunId === query.parentRunId) &&
      (query.runIdPrefix === undefined || run.runId.startsWith(query.runIdPrefix)) &&
      (query.q === undefined || query.q === "" || matchesText(run, query.q.toLowerCase(), this.live.tags.get(run.runId) ?? {})) &&
      (query.createdAfter === undefined || run.createdAt > query.createdAfter) &&
      (query.createdBefore === undefined || run.createdAt < query.createdBefore) &&
      this.live.matches(run.runId, query.tags)
    );
  }

  /** See {@link Store.readJournal}. */
  async readJournal(runId: string, options: { afterSeq?: number; limit?: number } = {}): Promise<JournalEntry[]> {
    const entries = (this.t.journal.get(runId) ?? []).filter((entry) => entry.seq > (options.afterSeq ?? 0));
    return (options.limit === undefined ? entries : entries.slice(0, Math.max(0, options.limit))).map((entry) => ({ ...entry }));
  }

  /** See {@link Store.searchJournal}: a scan of the run's journal, scored by the query words each text contains. */
  async searchJournal(runId: string, query: string, limit: number): Promise<JournalTextHit[]> {
    const terms = queryTerms(query);
    if (terms.length === 0) return [];
    const hits: (JournalTextHit & { score: number })[] = [];
    for (const entry of this.t.journal.get(runId) ?? []) {
      if (entry.kind !== "step.completed") continue;
      // The index, not the payload: a payload may be offloaded or encrypted (withPayloads).
      const text = this.t.texts.get(`${runId}\0${entry.seq}`);
      if (text === undefined) continue;
      const words = new Set(text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []);
      const score = terms.filter((term) => words.has(term)).length;
      if (score > 0) hits.push({ seq: entry.seq, opKey: entry.opKey ?? "", text, score });
    }
    hits.sort((a, b) => b.score - a.score || a.seq - b.seq);
    return hits.slice(0, Math.max(0, limit)).map(({ seq, opKey, text }) => ({ seq, opKey, text }));
  }

  /** See {@link Store.readJournalForResume}. */
  async readJournalForResume(runId: string): Promise<JournalEntry[]> {
    // seq n sits at index n - 1: the journal has no gaps.
    const journal = this.t.journal.get(runId) ?? [];
    return readForResume({
      latestCheckpointBelow: async (below) => {
        for (let i = Math.min(below - 1, journal.length) - 1; i >= 0; i--) if (isCheckpoint(journal[i]!.kind)) return { ...journal[i]! };
        return undefined;
      },
      range: async (from, below) => journal.slice(from - 1, Math.min(below - 1, journal.length)).map((entry) => ({ ...entry })),
      seqs: async (seqs) => seqs.flatMap((seq) => (journal[seq - 1] ? [{ ...journal[seq - 1]! }] : [])),
    });
  }

  /** See {@link Store.commit}. */
  async commit(writes: RunWrite[], now: number): Promise<CommitResult[]> {
    return this.t.atomic(() =>
      writes.map((write): CommitResult => {
        const run = this.t.runs.get(write.runId);
        const refused = fenceReason(run, write.epoch);
        if (refused || !run) return { ok: false, reason: refused ?? "not-found" };
        const firstSeq = run.lastSeq + 1;
        this.t.putBlobs(write.blobs, now);
        this.applyEntries(run, write.epoch, write.entries, now);
        return { ok: true, firstSeq, lastSeq: run.lastSeq + write.entries.length };
      }),
    );
  }

  /** See {@link Store.claimRuns}. */
  async claimRuns(request: ClaimRequest): Promise<RunRecord[]> {
    if (request.limit < 1 || request.workflows.length === 0) return [];
    return this.t.atomic(() => {
      const all = [...this.t.runs.values()];
      const due = all.filter((run) => isClaimable(run, request) && !this.flow.waitsForSlot(run));
      due.sort((a, b) => claimKey(a) - claimKey(b) || compareText(a.runId, b.runId));
      const candidates = due.slice(0, request.limit);
      if (request.queues && request.queues.length > 0) candidates.push(...this.flow.pick(all, request, request.limit - candidates.length));
      const taken: RunRecord[] = [];
      for (const run of candidates) {
        if (run.status === "running" && request.maxRecoveryAttempts !== undefined) {
          const journal = this.t.journal.get(run.runId) ?? [];
          const from = journal.findLastIndex((entry) => entry.kind === "run.claimed");
          const verdict = recoveryVerdict(
            run,
            journal.slice(Math.max(0, from)),
            this.recoveryFailures.get(run.runId) ?? 0,
            request.maxRecoveryAttempts,
            request.now,
          );
          this.recoveryFailures.set(run.runId, verdict.failures);
          if (verdict.dead) {
            this.t.putRun({ ...run, ...verdict.dead.run });
            this.t.append([verdict.dead.entry]);
            this.closeHumans(run.runId, "dead", request.now);
            continue;
          }
        }
        taken.push(run);
      }
      return taken.flatMap((run) => {
        const claimed = claimRun(run, request);
        this.t.putRun(claimed.run);
        this.t.append([claimed.entry]);
        return [{ ...claimed.run }];
      });
    });
  }

  /** See {@link Store.countVersions}. */
  async countVersions(): Promise<VersionCount[]> {
    const counts = new Map<string, VersionCount>();
    for (const run of this.t.runs.values()) {
      const key = `${run.workflow}\u0000${run.version}\u0000${run.status}`;
      const found = counts.get(key);
      if (found) found.count += 1;
      else counts.set(key, { workflow: run.workflow, version: run.version, status: run.status, count: 1 });
    }
    return [...counts.values()].sort((a, b) => compareText(a.workflow, b.workflow) || compareText(a.version, b.version) || compareText(a.status, b.status));
  }

  /** See {@link Store.setVersionDrained}. */
  async setVersionDrained(workflow: string, version: string, drained: boolean, now: number): Promise<boolean> {
    const key = `${workflow}@${version}`;
    if (drained === this.drained.has(key)) return false;
    if (drained) this.drained.set(key, { workflow, version, drainedAt: now });
    else this.drained.delete(key);
    return true;
  }

  /** See {@link Store.listDrainedVersions}. */
  async listDrainedVersions(): Promise<DrainedVersion[]> {
    return [...this.drained.values()].sort((a, b) => compareText(a.workflow, b.workflow) || compareText(a.version, b.version)).map((d) => ({ ...d }));
  }

  /** See {@link Store.renewLeases}. */
  async renewLeases(request: RenewRequest): Promise<string[]> {
    const lost: string[] = [];
    for (const lease of request.leases) {
      const run = this.t.runs.get(lease.runId);
      if (!run || run.leaseEpoch !== lease.epoch || run.leaseOwner !== request.workerId || isTerminal(run.status)) {
        lost.push(lease.runId);
        continue;
      }
      this.t.putRun({ ...run, leaseExpiresAt: request.now + request.leaseMs });
    }
    return lost;
  }

  /** See {@link Store.controlRun}. */
  async controlRun(runId: string, allowed: readonly RunStatus[], entry: NewEntry, now: number): Promise<{ run: RunRecord; applied: boolean }> {
    return this.t.atomic(() => {
      const run = this.t.runs.get(runId);
      if (!run) throw new RunNotFoundError(runId);
      if (!allowed.includes(run.status)) return { run: { ...run }, applied: false };
      const fenced = fenceOut(run);
      this.applyEntries(fenced, fenced.leaseEpoch, [entry], now);
      return { run: { ...this.mustGet(runId) }, applied: true };
    });
  }

  /** See {@link Store.sendEvent}. */
  async sendEvent(event: NewInboxEvent, now: number): Promise<{ duplicate: boolean }> {
    return this.t.atomic(() => {
      const run = this.t.runs.get(event.runId);
      if (!run) throw new RunNotFoundError(event.runId);
      if (this.t.findInbox(event.runId, event.eventId)) return { duplicate: true };
      if (isTerminal(run.status)) throw new RunFinishedError(run.runId, run.status, `send event "${event.type}"`);
      this.t.putBlobs(event.blobs, now);
      this.t.insertInbox({ runId: event.runId, type: event.type, eventId: event.eventId, payload: event.payload, consumedSeq: null, receivedAt: now });
      this.wake(event.runId, now);
      return { duplicate: false };
    });
  }

  /** See {@link Store.acquireStepSlots}. */
  async acquireStepSlots(request: StepSlotRequest, now: number): Promise<StepSlotGrant> {
    return this.t.atomic(() => this.stepFlow.acquire(request, now));
  }

  /** See {@link Store.releaseStepSlots}. */
  async releaseStepSlots(runId: string, opKey: string, buckets: readonly string[], now: number): Promise<void> {
    this.t.atomic(() => this.stepFlow.release(runId, opKey, buckets, now));
  }

  /** See {@link Store.pendingEvents}. */
  async pendingEvents(runId: string, type: string, limit?: number): Promise<InboxEvent[]> {
    const pending = this.inboxOf(runId).filter((event) => event.type === type && event.consumedSeq === null);
    return limit === undefined ? pending : pending.slice(0, Math.max(0, limit));
  }

  /** See {@link Store.listInbox}. */
  async listInbox(runId: string): Promise<InboxEvent[]> {
    return this.inboxOf(runId);
  }

  /** See {@link Store.getHumanRequest}. */
  async getHumanRequest(requestId: string): Promise<HumanRequest | undefined> {
    const request = this.t.humans.get(requestId);
    return request && copyHuman(request);
  }

  /** See {@link Store.listHumanRequests}. */
  async listHumanRequests(query: ListHumanRequestsQuery): Promise<HumanRequest[]> {
    const limit = pageLimit(query.limit, 1000);
    const sign = query.order === "desc" ? -1 : 1;
    const order = (a: Pick<HumanRequest, "createdAt" | "requestId">, b: Pick<HumanRequest, "createdAt" | "requestId">) =>
      sign * (a.createdAt - b.createdAt || compareText(a.requestId, b.requestId));
    const after = query.after;
    const matches = [...this.t.humans.values()].filter(
      (request) =>
        (query.status === undefined || request.status === query.status) &&
        (query.runId === undefined || request.runId === query.runId) &&
        (query.runIdPrefix === undefined || request.runId.startsWith(query.runIdPrefix)) &&
        (after === undefined || order(request, after) > 0),
    );
    matches.sort(order);
    return matches.slice(0, limit).map(copyHuman);
  }

  /** See {@link Store.answerHuman}. */
  async answerHuman(requestId: string, answer: HumanAnswer, now: number): Promise<void> {
    this.t.atomic(() => {
      const request = this.t.humans.get(requestId);
      if (!request) throw new HumanRequestNotFoundError(requestId);
      if (request.status === "closed") throw new HumanRequestClosedError(requestId, request.closedReason ?? "finished");
      if (request.status === "answered" || this.t.findInbox(request.runId, requestId)) throw new HumanRequestAnsweredError(requestId);
      const run = this.mustGet(request.runId);
      if (isTerminal(run.status)) throw new RunFinishedError(run.runId, run.status, `answer human request "${requestId}"`);
      const payload = encode(answer);
      this.t.insertInbox({ runId: run.runId, type: `human:${requestId}`, eventId: requestId, payload, consumedSeq: null, receivedAt: now });
      this.t.putHuman({ ...request, status: "answered", answer: payload, answeredAt: now });
      this.wake(run.runId, now);
    });
  }

  /** See {@link Store.upsertWorker}. */
  async upsertWorker(worker: WorkerRecord): Promise<void> {
    this.t.workers.set(worker.workerId, copyWorker(worker));
  }

  /** See {@link Store.removeWorker}. */
  async removeWorker(workerId: string): Promise<void> {
    this.t.workers.delete(workerId);
  }

  /** See {@link Store.listWorkers}. */
  async listWorkers(since: number): Promise<WorkerRecord[]> {
    const live = [...this.t.workers.values()].filter((worker) => worker.heartbeatAt > since);
    live.sort((a, b) => b.heartbeatAt - a.heartbeatAt || compareText(a.workerId, b.workerId));
    return live.map(copyWorker);
  }

  /** See {@link Store.saveSchedule}. */
  async saveSchedule(definition: ScheduleDefinitionRecord, now: number): Promise<ScheduleRecord> {
    return this.schedules.save(definition, now);
  }

  /** See {@link Store.getSchedule}. */
  async getSchedule(name: string): Promise<ScheduleRecord | undefined> {
    return this.schedules.get(name);
  }

  /** See {@link Store.listSchedules}. */
  async listSchedules(): Promise<ScheduleRecord[]> {
    return this.schedules.list();
  }

  /** See {@link Store.deleteSchedule}. */
  async deleteSchedule(name: string): Promise<boolean> {
    return this.schedules.delete(name);
  }

  /** See {@link Store.claimSchedule}. */
  async claimSchedule(name: string, owner: string, now: number, leaseMs: number): Promise<ScheduleRecord | undefined> {
    return this.schedules.claim(name, owner, now, leaseMs);
  }

  /** See {@link Store.updateScheduleState}. */
  async updateScheduleState(name: string, owner: string, epoch: number, state: ScheduleState, now: number): Promise<boolean> {
    return this.schedules.updateState(name, owner, epoch, state, now);
  }

  /** See {@link Store.setSchedulePaused}. */
  async setSchedulePaused(name: string, paused: boolean, now: number): Promise<ScheduleRecord | undefined> {
    return this.schedules.setPaused(name, paused, now);
  }

  /** See {@link Store.createToken}. */
  async createToken(token: TokenRecord): Promise<void> {
    if (this.t.tokens.has(token.id)) throw new Error(`A token with id "${token.id}" exists.`);
    this.t.tokens.set(token.id, copyToken(token));
  }

  /** See {@link Store.listTokens}. */
  async listTokens(): Promise<TokenRecord[]> {
    const tokens = [...this.t.tokens.values()];
    tokens.sort((a, b) => b.createdAt - a.createdAt || compareText(b.id, a.id));
    return tokens.map(copyToken);
  }

  /** See {@link Store.getToken}. */
  async getToken(id: string): Promise<TokenRecord | undefined> {
    const token = this.t.tokens.get(id);
    return token && copyToken(token);
  }

  /** See {@link Store.revokeToken}. */
  async revokeToken(id: string, now: number): Promise<boolean> {
    const token = this.t.tokens.get(id);
    if (!token || token.revokedAt !== null) return false;
    this.t.tokens.set(id, { ...token, revokedAt: now });
    return true;
  }

  /** See {@link Store.appendAudit}. */
  async appendAudit(entry: NewAuditEntry): Promise<AuditEntry> {
    const row: AuditEntry = { ...entry, detail: entry.detail === null ? null : structuredClone(entry.detail), id: this.t.audit.length + 1 };
    this.t.audit.push(row);
    return { ...row };
  }

  /** See {@link Store.listAudit}. */
  async listAudit(query: ListAuditQuery): Promise<AuditEntry[]> {
    const limit = pageLimit(query.limit);
    const out: AuditEntry[] = [];
    for (let i = this.t.audit.length - 1; i >= 0 && out.length < limit; i--) {
      const row = this.t.audit[i]!;
      if (query.beforeId !== undefined && row.id >= query.beforeId) continue;
      if (query.actor !== undefined && row.actor !== query.actor) continue;
      if (query.action !== undefined && row.action !== query.action) continue;
      if (query.target !== undefined && row.target !== query.target) continue;
      out.push({ ...row, detail: row.detail === null ? null : structuredClone(row.detail) });
    }
    return out;
  }

  /** See {@link Store.claimOutbox}. */
  async claimOutbox(request: OutboxClaimRequest): Promise<OutboxMessage[]> {
    return this.outbox.claim(request);
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
    return this.outbox.get(messageId);
  }

  /** See {@link Store.retryOutbox}. */
  async retryOutbox(messageId: string, now: number): Promise<{ message: OutboxMessage; applied: boolean }> {
    return this.outbox.retry(messageId, now);
  }

  /** See {@link Store.listStuckRuns}. */
  async listStuckRuns(now: number, graceMs: number, limit?: number): Promise<RunRecord[]> {
    const max = pageLimit(limit);
    const stuck = [...this.t.runs.values()].filter((run) => isStuck(run, now, graceMs));
    stuck.sort((a, b) => a.createdAt - b.createdAt || compareText(a.runId, b.runId));
    return stuck.slice(0, max).map((run) => ({ ...run }));
  }

  /** See {@link Store.readBlobs}. */
  async readBlobs(hashes: readonly string[]): Promise<PayloadBlob[]> {
    return hashes.flatMap((hash) => {
      const blob = this.t.blobs.get(hash);
      return blob ? [{ hash: blob.hash, size: blob.size, body: blob.body }] : [];
    });
  }

  /** See {@link Store.deleteUnreferencedBlobs}. */
  async deleteUnreferencedBlobs(before: number): Promise<number> {
    const referenced = new Set<string>();
    const note = (text: string | null) => {
      if (text?.startsWith(BLOB_REF_PREFIX)) referenced.add(text.slice(BLOB_REF_PREFIX.length, BLOB_REF_PREFIX.length + 64));
    };
    for (const entries of this.t.journal.values()) for (const entry of entries) note(entry.payload);
    for (const run of this.t.runs.values()) {
      note(run.input);
      note(run.output);
    }
    for (const event of this.t.inbox.values()) note(event.payload);
    let deleted = 0;
    for (const [hash, blob] of this.t.blobs) {
      if (blob.usedAt < before && !referenced.has(hash)) {
        this.t.blobs.delete(hash);
        deleted++;
      }
    }
    return deleted;
  }

  private insertRun(run: NewRun, now: number): RunRecord {
    this.t.putBlobs(run.blobs, now);
    const entries = newRunEntries(run, now);
    const record = newRunRecord(run, now);
    this.t.putRun(record);
    if (run.flow) this.flow.setFlow(run.runId, run.flow);
    this.live.insert(run);
    this.t.append(entries);
    return record;
  }

  /** See {@link Store.getRunTags}. */
  async getRunTags(runId: string): Promise<Record<string, string>> {
    return { ...this.live.tags.get(runId) };
  }

  /** See {@link Store.getRunValue}. */
  async getRunValue(runId: string, kind: RunValueKind, name: string): Promise<RunValue | undefined> {
    return this.live.getValue(runId, kind, name);
  }

  /** See {@link Store.listDueDeadlines}. */
  async listDueDeadlines(now: number, limit: number): Promise<RunDeadline[]> {
    return this.live.due(now, limit, (runId) => {
      const run = this.t.runs.get(runId);
      return run !== undefined && !isTerminal(run.status);
    });
  }

  /** See {@link Store.clearDeadline}. */
  async clearDeadline(runId: string): Promise<boolean> {
    if (!this.live.deadlines.has(runId)) return false;
    this.t.atomic(() => this.t.putIn(this.live.deadlines, runId, undefined));
    return true;
  }

  private applyEntries(run: RunRecord, epoch: number, entries: readonly NewEntry[], now: number): void {
    const plan = planEntries(run, epoch, entries, now);
    this.t.putRun(plan.run);
    this.t.append(plan.entries);
    for (const effect of plan.effects) this.applyEffect(effect, now);
  }

  private applyEffect(effect: SideEffect, now: number): void {
    switch (effect.kind) {
      case "consume-inbox": {
        const row = this.t.inbox.get(effect.inboxId);
        checkConsumable(effect, row);
        if (row) this.t.putInbox({ ...row, consumedSeq: effect.seq });
        return;
      }
      case "answer-human": {
        const request = this.t.humans.get(effect.requestId);
        if (request && request.status === "pending") this.t.putHuman({ ...request, status: "answered", answer: effect.answer, answeredAt: effect.at });
        return;
      }
      case "create-run":
        if (!this.t.runs.has(effect.run.runId)) this.insertRun(effect.run, now);
        return;
      case "put-value":
        this.live.putValue({ runId: effect.runId, kind: effect.valueKind, name: effect.name, value: effect.value, seq: effect.seq, at: effect.at });
        return;
      case "request-human":
        if (!this.t.humans.has(effect.request.requestId)) this.t.putHuman(effect.request);
        return;
      case "wake":
        this.wake(effect.runId, now);
        return;
      case "index-text":
        this.t.putText(effect.runId, effect.seq, effect.text);
        return;
      case "extend-human": {
        const request = this.t.humans.get(effect.requestId);
        if (request && request.status === "pending") this.t.putHuman({ ...request, timeoutAt: effect.timeoutAt });
        return;
      }
      case "insert-outbox":
        this.outbox.insert(effect.message);
        return;
      case "close-humans":
        this.closeHumans(effect.runId, effect.reason, effect.at);
        return;
      case "agent-rows":
        applyAgentRows(this.t, effect.rows);
        return;
      case "reopen-humans":
        for (const request of this.t.humansOf(effect.runId)) {
          if (request.status !== "closed") continue;
          const { closedReason: _, ...open } = request;
          this.t.putHuman({ ...open, status: "pending", answeredAt: null });
        }
        return;
    }
  }

  private closeHumans(runId: string, reason: string, at: number): void {
    for (const request of this.t.humansOf(runId)) {
      if (request.status === "pending") this.t.putHuman({ ...request, status: "closed", closedReason: reason, answeredAt: at });
    }
  }

  private wake(runId: string, now: number): void {
    const run = this.t.runs.get(runId);
    const patch = run && wakePatch(run, now);
    if (run && patch) this.t.putRun({ ...run, ...patch });
  }

  private mustGet(runId: string): RunRecord {
    const run = this.t.runs.get(runId);
    if (!run) throw new RunNotFoundError(runId);
    return run;
  }

  private inboxOf(runId: string): InboxEvent[] {
    const ids = this.t.inboxByRun.get(runId) ?? [];
    return ids.flatMap((id) => {
      const row = this.t.inbox.get(id);
      return row ? [{ ...row }] : [];
    });
  }
}

function copyWorker(worker: WorkerRecord): WorkerRecord {
  return { ...worker, workflows: [...worker.workflows] };
}

function copyHuman(request: HumanRequest): HumanRequest {
  return { ...request, options: [...request.options] };
}

function copyToken(token: TokenRecord): TokenRecord {
  return { ...token, scopes: [...token.scopes] };
}

/** `listRuns({ q })`: the run's id, workflow or error message contains `lowered` (already lower case). */
function matchesText(run: RunRecord, lowered: string, tags: Record<string, string>): boolean {
  if (run.runId.toLowerCase().includes(lowered) || run.workflow.toLowerCase().includes(lowered)) return true;
  if (run.input.toLowerCase().includes(lowered)) return true;
  if (Object.entries(tags).some(([key, value]) => `${key}:${value}`.toLowerCase().includes(lowered))) return true;
  if (run.error === null) return false;
  try {
    const message = (JSON.parse(run.error) as { message?: unknown } | null)?.message;
    return typeof message === "string" && message.toLowerCase().includes(lowered);
  } catch {
    return false;
  }
}
