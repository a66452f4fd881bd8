import { RunNotFoundError } from "../../core/errors.js";
import type { NewEntry } from "../../core/journal.js";
import type { RunRecord } from "../../core/run.js";
import type { NewRun } from "../../core/store.js";
import { checkConsumable, planEntries, type SideEffect } from "../common/plan-write.js";
import { newRunEntries, newRunRecord, wakePatch } from "../common/run-state.js";
import type { MemoryFlow } from "./memory-flow.js";
import type { MemoryLive } from "./memory-live.js";
import type { MemoryOutbox } from "./memory-outbox.js";
import type { MemoryTables } from "./memory-tables.js";
import { applyAgentRows } from "./memory-agent-rows.js";

/**
 * The state and writes the entity modules of a {@link MemoryStore} share: the tables, flow-control,
 * tag/value/deadline and outbox state, and run inserts and journal appends with their projections and
 * side effects (common/plan-write), inside the caller's `atomic`.
 */
export class MemoryWriter {
  constructor(
    readonly t: MemoryTables,
    readonly flow: MemoryFlow,
    readonly live: MemoryLive,
    readonly outbox: MemoryOutbox,
  ) {}

  /** Inserts a new run with its first entries, flow state, tags, deadline and blobs. */
  insertRun(run: NewRun, now: number): RunRecord {
    this.t.putBlobs(run.blobs, now);
    const entries = newRunEntries(run, now);
    const record = newRunRecord(run, now);
    this.t.putRun(record);
    if (run.flow) this.flow.setFlow(run.runId, run.flow);
    this.live.insert(run);
    this.t.append(entries);
    return record;
  }

  /** Appends `entries` with their projections and side effects. */
  applyEntries(run: RunRecord, epoch: number, entries: readonly NewEntry[], now: number): void {
    const plan = planEntries(run, epoch, entries, now);
    this.t.putRun(plan.run);
    this.t.append(plan.entries);
    for (const effect of plan.effects) this.applyEffect(effect, now);
  }

  /** Closes the run's pending human requests. */
  closeHumans(runId: string, reason: string, at: number): void {
    for (const request of this.t.humansOf(runId)) {
      if (request.status === "pending") this.t.putHuman({ ...request, status: "closed", closedReason: reason, answeredAt: at });
    }
  }

  /** Makes a waiting run runnable (see common/run-state `wakePatch`). */
  wake(runId: string, now: number): void {
    const run = this.t.runs.get(runId);
    const patch = run && wakePatch(run, now);
    if (run && patch) this.t.putRun({ ...run, ...patch });
  }

  mustGet(runId: string): RunRecord {
    const run = this.t.runs.get(runId);
    if (!run) throw new RunNotFoundError(runId);
    return run;
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
      case "move-inbox":
        this.t.moveInbox(effect.fromRunId, effect.toRunId);
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
}
