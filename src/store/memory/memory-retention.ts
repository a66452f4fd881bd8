import { IMPORT_CONFLICT_HINT, RunConflictError } from "../../core/errors.js";
import { chainBase, isTerminal, type RunRecord } from "../../core/run.js";
import type { CompactionOutcome, CompactionPlan, JournalCompaction } from "../../core/compaction.js";
import type { CompactCandidate, CompactQuery, PruneQuery, RetentionStore, RunImport } from "../../core/store.js";
import { compactRows, insertMarker, listCompactable, readMarker } from "./memory-compaction.js";
import type { MemoryTables } from "./memory-tables.js";
import { agentRowsOfEntries } from "../common/agent-rows.js";
import { applyAgentRows } from "./memory-agent-rows.js";
import type { MemoryWriter } from "./memory-write.js";

/** The {@link RetentionStore} part of {@link MemoryStore}: pruning finished runs, and moving runs between stores. */
export class MemoryRetention implements RetentionStore {
  constructor(private readonly w: MemoryWriter) {}

  /** See {@link Store.listPrunableRuns}. */
  async listPrunableRuns(query: PruneQuery): Promise<RunRecord[]> {
    return listPrunable(this.w.t, query);
  }

  /** See {@link Store.deleteRuns}. */
  async deleteRuns(runs: readonly { runId: string; lastSeq: number }[]): Promise<string[]> {
    const deleted = deleteRunRows(this.w.t, runs);
    for (const runId of deleted) this.w.live.forget(runId);
    return deleted;
  }

  /** See {@link Store.readRunRows}. */
  async readRunRows(runId: string): Promise<RunImport | undefined> {
    return readRows(this.w.t, runId);
  }

  /** See {@link Store.importRun}. */
  async importRun(data: RunImport): Promise<void> {
    importRows(this.w.t, data);
  }

  /** See {@link Store.listCompactableRuns}. */
  async listCompactableRuns(query: CompactQuery): Promise<CompactCandidate[]> {
    return listCompactable(this.w.t, query);
  }

  /** See {@link Store.compactJournal}. */
  async compactJournal(runId: string, plan: CompactionPlan, now: number): Promise<CompactionOutcome | undefined> {
    return compactRows(this.w.t, runId, plan, now);
  }

  /** See {@link Store.readCompaction}. */
  async readCompaction(runId: string): Promise<JournalCompaction | undefined> {
    return readMarker(this.w.t, runId);
  }
}

/** A terminal run that may go: its parent, if any, is finished, and so are all its children (and, for a continued run, its chain: common/retention-sql.ts). */
function prunable(t: MemoryTables, run: RunRecord): boolean {
  if (!isTerminal(run.status)) return false;
  if (run.parentRunId !== null) {
    const parent = t.runs.get(run.parentRunId);
    if (parent && !isTerminal(parent.status)) return false;
  }
  for (const other of t.runs.values()) if (other.parentRunId === run.runId && !isTerminal(other.status)) return false;
  for (const message of t.outbox.values()) if (message.runId === run.runId && message.status === "pending") return false;
  if (t.journal.get(run.runId)?.at(-1)?.kind === "run.continued") {
    const prefix = `${chainBase(run.runId)}~`;
    for (const other of t.runs.values()) if (other.runId >= prefix && other.runId < `${prefix}~` && !isTerminal(other.status)) return false;
  }
  return true;
}

/** See `Store.listPrunableRuns`. */
export function listPrunable(t: MemoryTables, query: PruneQuery): RunRecord[] {
  const statuses = new Set(query.statuses.filter(isTerminal));
  return [...t.runs.values()]
    .filter(
      (run) =>
        statuses.has(run.status) &&
        run.finishedAt !== null &&
        run.finishedAt < query.finishedBefore &&
        (query.workflow === undefined || run.workflow === query.workflow) &&
        prunable(t, run),
    )
    .sort((a, b) => a.finishedAt! - b.finishedAt! || (a.runId < b.runId ? -1 : a.runId > b.runId ? 1 : 0))
    .slice(0, Math.max(0, query.limit))
    .map((run) => ({ ...run }));
}

/** See `Store.deleteRuns`. Not undoable, so it checks everything before changing anything. */
export function deleteRunRows(t: MemoryTables, runs: readonly { runId: string; lastSeq: number }[]): string[] {
  const doomed = runs.filter(({ runId, lastSeq }) => {
    const run = t.runs.get(runId);
    return run !== undefined && run.lastSeq === lastSeq && prunable(t, run);
  });
  for (const { runId } of doomed) {
    t.runs.delete(runId);
    t.journal.delete(runId);
    t.agentMessages.delete(runId);
    t.toolCalls.delete(runId);
    t.compactions.delete(runId);
    for (const key of t.compactedTextKeys.keys()) if (key.startsWith(`${runId}\0`)) t.compactedTextKeys.delete(key);
    for (const id of t.inboxByRun.get(runId) ?? []) {
      const event = t.inbox.get(id);
      t.inbox.delete(id);
      if (event) t.forgetInboxKey(runId, event.eventId);
    }
    t.inboxByRun.delete(runId);
    for (const [requestId, request] of t.humans) if (request.runId === runId) t.humans.delete(requestId);
    for (const [messageId, message] of t.outbox) if (message.runId === runId) t.outbox.delete(messageId);
  }
  return doomed.map((run) => run.runId);
}

/** See `Store.readRunRows`. */
export function readRows(t: MemoryTables, runId: string): RunImport | undefined {
  const run = t.runs.get(runId);
  if (!run) return undefined;
  const compaction = readMarker(t, runId);
  return {
    run: { ...run },
    journal: (t.journal.get(runId) ?? []).map((entry) => ({ ...entry })),
    inbox: (t.inboxByRun.get(runId) ?? []).map((id) => {
      const { id: _, ...event } = t.inbox.get(id)!;
      return event;
    }),
    humanRequests: [...t.humans.values()].filter((r) => r.runId === runId).sort((a, b) => a.createdAt - b.createdAt || (a.requestId < b.requestId ? -1 : 1)),
    ...(compaction ? { compaction } : {}),
  };
}

/** See `Store.importRun`: inside `t.atomic`, so a conflict leaves nothing behind. */
export function importRows(t: MemoryTables, data: RunImport): void {
  t.atomic(() => {
    if (t.runs.has(data.run.runId)) throw new RunConflictError(data.run.runId, "in this store", IMPORT_CONFLICT_HINT);
    for (const request of data.humanRequests) {
      if (t.humans.has(request.requestId)) {
        throw new RunConflictError(data.run.runId, `cannot be imported: human request "${request.requestId}" exists in this store`, IMPORT_CONFLICT_HINT);
      }
    }
    t.putRun({ ...data.run });
    t.append(data.journal.map((entry) => ({ ...entry })));
    for (const event of data.inbox) t.insertInbox({ ...event });
    for (const request of data.humanRequests) t.putHuman({ ...request });
    insertMarker(t, data.run.runId, data.compaction);
    for (const rows of agentRowsOfEntries(data.run.runId, data.journal)) applyAgentRows(t, rows);
  });
}
