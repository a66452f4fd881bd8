import type { JournalCompaction } from "../../core/compaction.js";
import type { JournalEntry } from "../../core/journal.js";
import type { RunRecord } from "../../core/run.js";
import type { OutboxMessage } from "../../core/outbox.js";
import type { AgentMessageRow, ToolCallRow } from "../../core/store/agent-rows.js";
import type { AuditEntry, HumanRequest, InboxEvent, PayloadBlob, TokenRecord, WorkerRecord } from "../../core/store.js";

/**
 * The rows of a {@link MemoryStore}, with transactions: every mutation made inside
 * {@link MemoryTables.atomic} is undone if the callback throws, so a failed
 * operation leaves nothing half-written, exactly like a rolled-back SQL transaction.
 * Rows are replaced, never mutated in place, so readers may hold on to them.
 */
export class MemoryTables {
  readonly runs = new Map<string, RunRecord>();
  readonly journal = new Map<string, JournalEntry[]>();
  readonly inbox = new Map<number, InboxEvent>();
  readonly inboxByRun = new Map<string, number[]>();
  readonly humans = new Map<string, HumanRequest>();
  /** Request ids by run: a superset index (ids of deleted or rolled-back requests may linger; check `humans`). */
  private readonly humanIdsByRun = new Map<string, Set<string>>();
  /** Indexed step-result text (`StepOptions.searchText`) by `runId\0seq`, like the SQL stores' index: never the payload itself. */
  readonly texts = new Map<string, string>();
  /** Agent message rows by run, then seq (inserted in seq order), and tool call rows by run, then idempotency key (memory-agent-rows.ts). */
  readonly agentMessages = new Map<string, Map<number, AgentMessageRow>>();
  readonly toolCalls = new Map<string, Map<string, ToolCallRow>>();
  /** Op keys of compacted `step.completed` entries with indexed text, by `runId\0seq`: the search index outlives them, as in the SQL stores. */
  readonly compactedTextKeys = new Map<string, string>();
  /** Compaction markers by run (`journal_compactions`); a marker with `entries: 0` only records the checkpoint looked at. */
  readonly compactions = new Map<string, JournalCompaction>();
  /** Content-addressed payloads by hash; `usedAt` is the last write that referenced each. */
  readonly blobs = new Map<string, PayloadBlob & { usedAt: number }>();
  /** Outbox messages by message id, in insertion (id) order. */
  readonly outbox = new Map<string, OutboxMessage>();
  private nextOutboxId = 1;
  /** The worker registry: not transactional, like a heartbeat table. */
  readonly workers = new Map<string, WorkerRecord>();
  /** API tokens and the audit log: each change is one operation, so neither needs undo. */
  readonly tokens = new Map<string, TokenRecord>();
  readonly audit: AuditEntry[] = [];
  private readonly inboxKeys = new Map<string, number>();
  private nextInboxId = 1;
  private undo: (() => void)[] | null = null;

  /** Runs `fn` as one transaction. */
  atomic<T>(fn: () => T): T {
    if (this.undo) return fn();
    const undo: (() => void)[] = [];
    this.undo = undo;
    try {
      return fn();
    } catch (error) {
      for (let i = undo.length - 1; i >= 0; i--) undo[i]?.();
      throw error;
    } finally {
      this.undo = null;
    }
  }

  /** Inserts or replaces a run row. */
  putRun(run: RunRecord): void {
    const previous = this.runs.get(run.runId);
    this.runs.set(run.runId, run);
    this.record(() => (previous ? this.runs.set(run.runId, previous) : this.runs.delete(run.runId)));
  }

  /** Appends entries to their runs' journals. */
  append(entries: readonly JournalEntry[]): void {
    for (const entry of entries) {
      let list = this.journal.get(entry.runId);
      if (!list) {
        list = [];
        this.journal.set(entry.runId, list);
      }
      list.push(entry);
      const appendedTo = list;
      this.record(() => void appendedTo.pop());
    }
  }

  /** The inbox row of `(runId, eventId)`, if any. */
  findInbox(runId: string, eventId: string): InboxEvent | undefined {
    const id = this.inboxKeys.get(inboxKey(runId, eventId));
    return id === undefined ? undefined : this.inbox.get(id);
  }

  /** Inserts an inbox row with the next id. */
  insertInbox(event: Omit<InboxEvent, "id">): InboxEvent {
    const row: InboxEvent = { ...event, id: this.nextInboxId++ };
    const key = inboxKey(row.runId, row.eventId);
    let ids = this.inboxByRun.get(row.runId);
    if (!ids) {
      ids = [];
      this.inboxByRun.set(row.runId, ids);
    }
    ids.push(row.id);
    const runIds = ids;
    this.inbox.set(row.id, row);
    this.inboxKeys.set(key, row.id);
    this.record(() => {
      runIds.pop();
      this.inbox.delete(row.id);
      this.inboxKeys.delete(key);
      this.nextInboxId = row.id;
    });
    return row;
  }

  /** Indexes a step result's search text. */
  putText(runId: string, seq: number, text: string): void {
    const key = `${runId}\0${seq}`;
    this.texts.set(key, text);
    this.record(() => this.texts.delete(key));
  }

  /** Inserts blobs, or marks existing ones used. */
  putBlobs(blobs: readonly PayloadBlob[] | undefined, now: number): void {
    for (const blob of blobs ?? []) {
      const previous = this.blobs.get(blob.hash);
      this.blobs.set(blob.hash, { ...(previous ?? blob), usedAt: now });
      this.record(() => (previous ? this.blobs.set(blob.hash, previous) : this.blobs.delete(blob.hash)));
    }
  }

  /** Replaces an existing inbox row. */
  putInbox(row: InboxEvent): void {
    const previous = this.inbox.get(row.id);
    this.inbox.set(row.id, row);
    if (previous) this.record(() => this.inbox.set(row.id, previous));
  }

  /** Inserts or replaces a human request. */
  putHuman(request: HumanRequest): void {
    const previous = this.humans.get(request.requestId);
    this.humans.set(request.requestId, request);
    let ids = this.humanIdsByRun.get(request.runId);
    if (!ids) this.humanIdsByRun.set(request.runId, (ids = new Set()));
    ids.add(request.requestId);
    this.record(() => (previous ? this.humans.set(request.requestId, previous) : this.humans.delete(request.requestId)));
  }

  /** The human requests of a run. */
  humansOf(runId: string): HumanRequest[] {
    return [...(this.humanIdsByRun.get(runId) ?? [])].flatMap((id) => {
      const request = this.humans.get(id);
      return request && request.runId === runId ? [request] : [];
    });
  }

  /** Moves a continued run's unconsumed inbox rows to the run that continues it, ids (so arrival order) kept. */
  moveInbox(fromRunId: string, toRunId: string): void {
    const from = this.inboxByRun.get(fromRunId) ?? [];
    const moving = from.filter((id) => this.inbox.get(id)?.consumedSeq === null);
    if (moving.length === 0) return;
    this.putIn(
      this.inboxByRun,
      fromRunId,
      from.filter((id) => !moving.includes(id)),
    );
    this.putIn(
      this.inboxByRun,
      toRunId,
      [...(this.inboxByRun.get(toRunId) ?? []), ...moving].sort((a, b) => a - b),
    );
    for (const id of moving) {
      const row = this.inbox.get(id)!;
      this.putInbox({ ...row, runId: toRunId });
      this.putIn(this.inboxKeys, inboxKey(fromRunId, row.eventId), undefined);
      this.putIn(this.inboxKeys, inboxKey(toRunId, row.eventId), id);
    }
  }

  /** Forgets the `(runId, eventId)` key of a deleted inbox row (retention). */
  forgetInboxKey(runId: string, eventId: string): void {
    this.inboxKeys.delete(inboxKey(runId, eventId));
  }

  /** Inserts an outbox message with the next id, unless one with its message id exists. */
  insertOutbox(message: Omit<OutboxMessage, "id">): void {
    if (this.outbox.has(message.messageId)) return;
    const row: OutboxMessage = { ...message, id: this.nextOutboxId++ };
    this.outbox.set(row.messageId, row);
    this.record(() => {
      this.outbox.delete(row.messageId);
      this.nextOutboxId = row.id;
    });
  }

  /** Replaces an existing outbox message (claims and settlements are single operations: no undo needed). */
  putOutbox(message: OutboxMessage): void {
    this.outbox.set(message.messageId, message);
  }

  /** Sets `key` in `map` (any table of the store), undone if the transaction fails. Undefined deletes. */
  putIn<K, V>(map: Map<K, V>, key: K, value: V | undefined): void {
    const had = map.has(key);
    const previous = map.get(key);
    if (value === undefined) map.delete(key);
    else map.set(key, value);
    this.record(() => (had ? map.set(key, previous as V) : map.delete(key)));
  }

  private record(step: () => void): void {
    this.undo?.push(step);
  }
}

function inboxKey(runId: string, eventId: string): string {
  return JSON.stringify([runId, eventId]);
}
