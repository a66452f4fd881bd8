import { RunNotFoundError } from "../../core/errors.js";
import type { JournalEntry, NewEntry } from "../../core/journal.js";
import type { RunRecord } from "../../core/run.js";
import type { NewRun, PayloadBlob } from "../../core/store.js";
import { checkConsumable, humanRequestRow, planEntries, type SideEffect } from "../common/plan-write.js";
import { newRunEntries, newRunRecord, wakePatch, type FenceState, type RunState } from "../common/run-state.js";
import { INSERT_BLOB } from "./sqlite-blobs-queries.js";
import type { SqliteConnection } from "./sqlite-connection.js";
import { MOVE_INBOX } from "./sqlite-inbox-queries.js";
import { runParams, stateParams, toRun, toState, type InboxRow, type StateRow } from "./sqlite-rows.js";
import { SqliteAgentRows } from "./sqlite-agent-rows.js";

/**
 * The writes the entity modules of a {@link SqliteStore} share, inside the caller's transaction: run
 * rows, journal entries with their projections and side effects (common/plan-write), wake-ups and blobs.
 */
export class SqliteWriter {
  private agentRowStatements: SqliteAgentRows | undefined;

  constructor(private readonly c: SqliteConnection) {}

  /** Agent message and tool call statements, prepared on first use (after migrations). */
  get agentRows(): SqliteAgentRows {
    return (this.agentRowStatements ??= new SqliteAgentRows(this.c.db));
  }

  loadState(runId: string): RunState | undefined {
    const row = this.c.q.getState.get(runId) as StateRow | undefined;
    return row && toState(row);
  }

  /** The columns of the run's row a plain append needs (see SqliteJournal.commit). */
  loadFence(runId: string): FenceState | undefined {
    return this.c.q.getFence.get(runId) as FenceState | undefined;
  }

  loadRun(runId: string): RunRecord | undefined {
    const row = this.c.q.getRun.get(runId) as (StateRow & { input: string }) | undefined;
    return row && toRun(row);
  }

  mustLoadRun(runId: string): RunRecord {
    const run = this.loadRun(runId);
    if (!run) throw new RunNotFoundError(runId);
    return run;
  }

  /** Inserts a new run with its first entries, flow columns, tags, deadline and blobs. */
  insertRun(run: NewRun, now: number): RunRecord {
    if (run.blobs) this.insertBlobs(run.blobs, now);
    const entries = newRunEntries(run, now);
    const record = newRunRecord(run, now);
    this.c.q.insertRun.run(runParams(record));
    if (run.flow) this.c.flow.setFlow(run.runId, run.flow);
    if (run.tags || run.deadlineAt !== undefined) this.c.live.insert(run);
    this.insertEntries(entries);
    return record;
  }

  insertEntries(entries: readonly JournalEntry[]): void {
    for (const e of entries) this.c.q.insertEntry.run(e.runId, e.seq, e.kind, e.opKey, e.payload, e.epoch, e.at);
  }

  /** Inserts plain appends (common/plan-write `isPlainAppend`) after `lastSeq`; the run's row is the caller's to advance. */
  insertPlain(runId: string, lastSeq: number, epoch: number, entries: readonly NewEntry[], now: number): void {
    const insert = this.c.q.insertEntry;
    entries.forEach((e, i) => insert.run(runId, lastSeq + i + 1, e.kind, e.opKey, e.payload, epoch, now));
  }

  /** Writes the row of a run that only had plain appends: its last seq and update time. */
  advanceSeq(runId: string, lastSeq: number, now: number): void {
    this.c.q.advanceSeq.run(lastSeq, now, runId);
  }

  /** Appends `entries` with their projections and side effects. `stored` is the row as the database holds it, when `run` already differs from it. */
  applyEntries(run: RunState, epoch: number, entries: readonly NewEntry[], now: number, stored: RunState = run): void {
    const plan = planEntries(run, epoch, entries, now);
    this.updateRow(stored, plan.run);
    this.insertEntries(plan.entries);
    for (const effect of plan.effects) this.applyEffect(effect, now);
  }

  /** Writes `next` over the row the database holds as `stored`. */
  updateRow(stored: RunState, next: RunState): void {
    if (onlySeqAdvanced(stored, next)) this.c.q.advanceSeq.run(next.lastSeq, next.updatedAt, next.runId);
    else this.c.q.updateState.run(stateParams(next));
  }

  /** Makes a waiting run runnable (see common/run-state `wakePatch`). */
  wake(run: RunState, now: number): void {
    const patch = wakePatch(run, now);
    if (patch) this.c.q.updateState.run(stateParams({ ...run, ...patch }));
  }

  /** Inserts blobs, or marks existing ones used (content-addressed: same hash, same text). */
  insertBlobs(blobs: readonly PayloadBlob[], now: number): void {
    if (blobs.length === 0) return;
    const statement = this.c.q.prepared(INSERT_BLOB);
    for (const blob of blobs) statement.run(blob.hash, blob.size, blob.body, now, now);
  }

  private applyEffect(effect: SideEffect, now: number): void {
    const q = this.c.q;
    switch (effect.kind) {
      case "consume-inbox": {
        checkConsumable(effect, q.getInbox.get(effect.inboxId) as InboxRow | undefined);
        q.consumeInbox.run(effect.seq, effect.inboxId);
        return;
      }
      case "answer-human":
        q.answerHuman.run(effect.answer, effect.at, effect.requestId);
        return;
      case "create-run":
        if (!q.getState.get(effect.run.runId)) this.insertRun(effect.run, now);
        return;
      case "put-value":
        this.c.live.putValue(effect);
        return;
      case "request-human":
        q.insertHuman.run(...humanRequestRow(effect.request));
        return;
      case "wake": {
        const run = this.loadState(effect.runId);
        if (run) this.wake(run, now);
        return;
      }
      case "index-text":
        q.insertText.run(effect.text, effect.runId, effect.seq, effect.opKey);
        return;
      case "extend-human":
        q.extendHuman.run(effect.timeoutAt, effect.requestId);
        return;
      case "insert-outbox":
        this.c.outbox.insertMessage(effect.message);
        return;
      case "close-humans":
        q.closeHumans.run(effect.reason, effect.at, effect.runId);
        return;
      case "reopen-humans":
        q.reopenHumans.run(effect.runId);
        return;
      case "agent-rows":
        this.agentRows.apply(effect.rows);
        return;
      case "move-inbox":
        q.prepared(MOVE_INBOX).run(effect.toRunId, effect.fromRunId);
        return;
    }
  }
}

/** True when `next` differs from `run` only in `lastSeq` and `updatedAt`. */
function onlySeqAdvanced(run: RunState, next: RunState): boolean {
  for (const key of Object.keys(next) as (keyof RunState)[]) {
    if (key !== "lastSeq" && key !== "updatedAt" && next[key] !== run[key]) return false;
  }
  return true;
}
