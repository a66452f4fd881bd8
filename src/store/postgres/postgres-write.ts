import type { JournalCompaction } from "../../core/compaction.js";
import { insertMarker } from "./postgres-compaction.js";
import type { JournalEntry, NewEntry } from "../../core/journal.js";
import type { RunRecord } from "../../core/run.js";
import type { CopiedEntry, NewRun } from "../../core/store.js";
import { checkConsumable, humanRequestRow, planEntries, type SideEffect } from "../common/plan-write.js";
import { copiedRun, newRunEntries, newRunRecord, wakePatch, type RunState } from "../common/run-state.js";
import { CONSUME_INBOX, LOCK_INBOX, MOVE_INBOX } from "./postgres-inbox-queries.js";
import { ANSWER_HUMAN, CLOSE_HUMANS, EXTEND_HUMAN, INSERT_HUMAN, REOPEN_HUMANS } from "./postgres-human-requests-queries.js";
import { INSERT_ENTRIES, INSERT_TEXT } from "./postgres-journal-queries.js";
import { INSERT_RUN, INSERT_RUNS, LOCK_STATES, UPDATE_STATES } from "./postgres-runs-queries.js";
import { entryArrays, runArrays, runValues, stateArrays, toState, type StateRow } from "./postgres-rows.js";
import { setFlows } from "./postgres-flow.js";
import { insertLive, putValue } from "./postgres-live-runs.js";
import { INSERT_OUTBOX, insertOutboxParams } from "./postgres-outbox-queries.js";
import type { Tx } from "./postgres-tx.js";
import { applyAgentRows } from "./postgres-agent-rows.js";

/** Runs due this soon after a write get a wake-up NOTIFY, so workers need not poll for them. */
export const WAKE_HORIZON_MS = 2000;

type Consume = Extract<SideEffect, { kind: "consume-inbox" }>;

/**
 * The writes of one transaction. Runs are locked (`FOR UPDATE`) before they are read, and the
 * session keeps their rows in memory, so a batch sees its own changes exactly as the SQLite
 * store's one-row-at-a-time writes do. The common writes are then flushed with one statement
 * each: every changed run row, every journal entry, every consumed inbox row. Rare side effects
 * (child runs, human requests, waking a run outside the batch) run as they come.
 */
export class WriteSession {
  private readonly states = new Map<string, RunState>();
  private readonly changed = new Set<string>();
  private readonly created = new Set<string>();
  private readonly entries: JournalEntry[] = [];
  private readonly consumed: Consume[] = [];
  /** Continued runs whose unconsumed inbox rows move to their successor at flush, after the consumptions. */
  private readonly moves: Extract<SideEffect, { kind: "move-inbox" }>[] = [];
  /** Runs that finished in this transaction, with their final status: their pending requests close at flush. */
  private readonly closing = new Map<string, string>();

  constructor(private readonly tx: Tx) {}

  /** The transaction's time. */
  get now(): number {
    return this.tx.now;
  }

  /** Locks and loads the runs not yet held, in run_id order (so lockers of overlapping sets never deadlock on them). */
  async lock(runIds: readonly string[]): Promise<void> {
    const wanted = [...new Set(runIds)].filter((runId) => !this.states.has(runId));
    if (wanted.length === 0) return;
    for (const row of await this.tx.query<StateRow>(LOCK_STATES, [wanted])) this.states.set(row.runId, toState(row));
  }

  /** A locked run's current row (with this session's changes), or undefined when it does not exist. */
  state(runId: string): RunState | undefined {
    return this.states.get(runId);
  }

  /** Replaces a locked run's row; it is written at {@link WriteSession.flush}. */
  put(run: RunState): void {
    this.states.set(run.runId, run);
    this.changed.add(run.runId);
  }

  /** Appends entries to a locked, fenced run, projecting them and applying their side effects. */
  async append(run: RunState, epoch: number, entries: readonly NewEntry[]): Promise<void> {
    const plan = planEntries(run, epoch, entries, this.now);
    this.put(plan.run);
    this.entries.push(...plan.entries);
    for (const effect of plan.effects) await this.apply(effect);
  }

  /**
   * Inserts a run with its `run.created` entry unless a run with that id exists.
   * @returns the new row, or undefined when the id was taken.
   */
  async createRun(run: NewRun): Promise<RunRecord | undefined> {
    if (this.states.has(run.runId)) return undefined;
    const record = newRunRecord(run, this.now);
    const inserted = await this.tx.query(INSERT_RUN, runValues(record));
    if (inserted.length === 0) return undefined;
    if (run.flow) await setFlows(this.tx, [[run.runId, run.flow]]);
    if (run.tags || run.deadlineAt !== undefined) await insertLive(this.tx, [run]);
    // Validated only for a run that is new, like the other stores; a bad input rolls the insert back.
    const entries = newRunEntries(run, this.now);
    const { input: _, ...state } = record;
    this.states.set(run.runId, state);
    this.created.add(run.runId);
    this.entries.push(...entries);
    return record;
  }

  /**
   * Inserts a run with a copied journal (see `Store.createRunWithJournal`) unless a run with that id exists.
   * @returns the new row, or undefined when the id was taken.
   */
  async createRunWithJournal(run: NewRun, copies: readonly CopiedEntry[], compaction?: JournalCompaction): Promise<RunRecord | undefined> {
    if (this.states.has(run.runId)) return undefined;
    const copied = copiedRun(run, copies, this.now);
    const inserted = await this.tx.query(INSERT_RUN, runValues(copied.run));
    if (inserted.length === 0) return undefined;
    const { input: _, ...state } = copied.run;
    this.states.set(run.runId, state);
    this.created.add(run.runId);
    this.entries.push(...copied.entries);
    for (const t of copied.texts) await this.tx.query(INSERT_TEXT, [run.runId, t.seq, t.opKey, t.text]);
    for (const rows of copied.agentRows) await applyAgentRows(this.tx, rows);
    await insertMarker(this.tx, run.runId, compaction);
    return copied.run;
  }

  /**
   * {@link WriteSession.createRun} for several runs, with one INSERT for them all.
   * @returns for each run, in order, its new row, or undefined when the id was taken (or repeats an earlier one).
   */
  async createRuns(runs: readonly NewRun[]): Promise<(RunRecord | undefined)[]> {
    const seen = new Set<string>();
    const records = runs.map((run) => {
      if (this.states.has(run.runId) || seen.has(run.runId)) return undefined;
      seen.add(run.runId);
      return newRunRecord(run, this.now);
    });
    const fresh = records.filter((record) => record !== undefined);
    if (fresh.length === 0) return records;
    const inserted = new Set((await this.tx.query<{ runId: string }>(INSERT_RUNS, runArrays(fresh))).map((row) => row.runId));
    await setFlows(
      this.tx,
      runs.flatMap((run, i) => (run.flow && records[i] && inserted.has(run.runId) ? [[run.runId, run.flow] as const] : [])),
    );
    await insertLive(
      this.tx,
      runs.filter((run, i) => records[i] && inserted.has(run.runId)),
    );
    return records.map((record, i) => {
      if (!record || !inserted.has(record.runId)) return undefined;
      const entries = newRunEntries(runs[i]!, this.now);
      const { input: _, ...state } = record;
      this.states.set(record.runId, state);
      this.created.add(record.runId);
      this.entries.push(...entries);
      return record;
    });
  }

  /** Wakes a run (see common/run-state `wakePatch`), locking it first if needed. */
  async wake(runId: string): Promise<void> {
    await this.lock([runId]);
    const run = this.states.get(runId);
    const patch = run && wakePatch(run, this.now);
    if (run && patch) this.put({ ...run, ...patch });
  }

  /**
   * Writes what the session changed: consumed inbox rows (checked first: a bad consumption
   * throws and rolls the whole transaction back), the rest of a continued run's inbox moved on, run rows, journal entries (named for the journal
   * notice); and asks for a wake-up NOTIFY when a run it touched is runnable now or within {@link WAKE_HORIZON_MS}.
   */
  async flush(): Promise<void> {
    if (this.consumed.length > 0) await this.consume();
    for (const move of this.moves) await this.tx.query(MOVE_INBOX, [move.toRunId, move.fromRunId]);
    if (this.changed.size > 0) {
      const runs = [...this.changed].flatMap((runId) => this.states.get(runId) ?? []);
      await this.tx.query(UPDATE_STATES, stateArrays(runs));
    }
    if (this.entries.length > 0) {
      await this.tx.query(INSERT_ENTRIES, entryArrays(this.entries));
      this.tx.journaled(this.entries.map((entry) => entry.runId));
    }
    if (this.closing.size > 0) await this.tx.query(CLOSE_HUMANS, [[...this.closing.keys()], [...this.closing.values()], this.now]);
    const touched = [...this.changed, ...this.created].flatMap((runId) => this.states.get(runId) ?? []);
    if (touched.some((run) => runnableSoon(run, this.now))) this.tx.wake();
  }

  private async apply(effect: SideEffect): Promise<void> {
    switch (effect.kind) {
      case "consume-inbox":
        // Inbox rows are never created inside a commit, so checking them all at flush is the same as checking each now.
        this.consumed.push(effect);
        return;
      case "answer-human":
        await this.tx.query(ANSWER_HUMAN, [effect.answer, effect.at, effect.requestId]);
        return;
      case "create-run":
        await this.createRun(effect.run);
        return;
      case "put-value":
        await putValue(this.tx, effect);
        return;
      case "request-human":
        await this.tx.query(INSERT_HUMAN, humanRequestRow(effect.request));
        return;
      case "wake":
        await this.wake(effect.runId);
        return;
      case "index-text":
        await this.tx.query(INSERT_TEXT, [effect.runId, effect.seq, effect.opKey, effect.text]);
        return;
      case "extend-human":
        await this.tx.query(EXTEND_HUMAN, [effect.timeoutAt, effect.requestId]);
        return;
      case "close-humans":
        this.closing.set(effect.runId, effect.reason);
        return;
      case "agent-rows":
        await applyAgentRows(this.tx, effect.rows);
        return;
      case "reopen-humans":
        this.closing.delete(effect.runId);
        await this.tx.query(REOPEN_HUMANS, [effect.runId]);
        return;
      case "move-inbox":
        this.moves.push(effect);
        return;
      case "insert-outbox":
        // Dispatchers listen on the workers' wake-up channel: the NOTIFY goes out with the commit.
        await this.tx.query(INSERT_OUTBOX, insertOutboxParams(effect.message));
        this.tx.wake();
        return;
    }
  }

  private async consume(): Promise<void> {
    const ids = [...new Set(this.consumed.map((effect) => effect.inboxId))];
    const rows = await this.tx.query<{ id: number; runId: string; consumedSeq: number | null }>(LOCK_INBOX, [ids]);
    const byId = new Map(rows.map((row) => [row.id, row]));
    for (const effect of this.consumed) {
      const row = byId.get(effect.inboxId);
      checkConsumable(effect, row);
      if (row) byId.set(row.id, { ...row, consumedSeq: effect.seq });
    }
    await this.tx.query(CONSUME_INBOX, [this.consumed.map((effect) => effect.inboxId), this.consumed.map((effect) => effect.seq)]);
  }
}

/** True when a worker could claim `run` now or within {@link WAKE_HORIZON_MS}. */
export function runnableSoon(run: RunState, now: number): boolean {
  switch (run.status) {
    case "pending":
      return true;
    case "suspended":
      return run.wakeAt !== null && run.wakeAt <= now + WAKE_HORIZON_MS;
    case "running":
      return run.leaseOwner === null;
    default:
      return false;
  }
}
