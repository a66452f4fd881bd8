import type { EntryKind, JournalEntry } from "../../core/journal.js";
import type { RunRecord, RunStatus } from "../../core/run.js";
import type { InboxEvent, WorkerRecord } from "../../core/store.js";
import type { RunState } from "../common/run-state.js";

/** Columns of a {@link RunState}, aliased to its field names (the input is left out: it can be large). */
export const STATE_COLUMNS = [
  "run_id AS runId",
  "workflow",
  "version",
  "status",
  "output",
  "error",
  "parent_run_id AS parentRunId",
  "parent_op_key AS parentOpKey",
  "wake_at AS wakeAt",
  "waiting_for AS waitingFor",
  "lease_owner AS leaseOwner",
  "lease_expires_at AS leaseExpiresAt",
  "lease_epoch AS leaseEpoch",
  "last_seq AS lastSeq",
  "wake_pending AS wakePending",
  "created_at AS createdAt",
  "updated_at AS updatedAt",
  "finished_at AS finishedAt",
].join(", ");

/** Columns of a whole {@link RunRecord}. */
export const RUN_COLUMNS = `${STATE_COLUMNS}, input`;

/** A runs row as SQLite returns it: booleans are integers. */
export type StateRow = Omit<RunState, "wakePending" | "status"> & { status: string; wakePending: number };

/** Maps a row selected with {@link STATE_COLUMNS}. */
export function toState(row: StateRow): RunState {
  return { ...row, status: row.status as RunStatus, wakePending: row.wakePending === 1 };
}

/** Maps a row selected with {@link RUN_COLUMNS}. */
export function toRun(row: StateRow & { input: string }): RunRecord {
  return { ...row, status: row.status as RunStatus, wakePending: row.wakePending === 1 };
}

/** Named parameters that write the mutable columns of a run. */
export function stateParams(run: RunState): Record<string, string | number | null> {
  return {
    runId: run.runId,
    status: run.status,
    output: run.output,
    error: run.error,
    wakeAt: run.wakeAt,
    waitingFor: run.waitingFor,
    leaseOwner: run.leaseOwner,
    leaseExpiresAt: run.leaseExpiresAt,
    leaseEpoch: run.leaseEpoch,
    lastSeq: run.lastSeq,
    wakePending: run.wakePending ? 1 : 0,
    updatedAt: run.updatedAt,
    finishedAt: run.finishedAt,
  };
}

/** Named parameters that insert a whole run. */
export function runParams(run: RunRecord): Record<string, string | number | null> {
  return {
    ...stateParams(run),
    workflow: run.workflow,
    version: run.version,
    input: run.input,
    parentRunId: run.parentRunId,
    parentOpKey: run.parentOpKey,
    createdAt: run.createdAt,
  };
}

/** Columns of a journal entry, aliased. */
export const ENTRY_COLUMNS = "run_id AS runId, seq, kind, op_key AS opKey, payload, epoch, at";

/** A journal row as SQLite returns it. */
export type EntryRow = Omit<JournalEntry, "kind"> & { kind: string };

/** Maps a row selected with {@link ENTRY_COLUMNS}. */
export function toEntry(row: EntryRow): JournalEntry {
  return { ...row, kind: row.kind as EntryKind };
}

/** Columns of an inbox event, aliased. */
export const INBOX_COLUMNS = "id, run_id AS runId, type, event_id AS eventId, payload, consumed_seq AS consumedSeq, received_at AS receivedAt";

/** Columns of a human request, aliased. */
export const HUMAN_COLUMNS =
  "request_id AS requestId, run_id AS runId, op_key AS opKey, question, options, status, answer, timeout_at AS timeoutAt, created_at AS createdAt, answered_at AS answeredAt, context, closed_reason AS closedReason";

/** A human_requests row as SQLite returns it: options are JSON text. */
export { toHuman, type HumanRow } from "../common/human-rows.js";

/** An inbox row as SQLite returns it. */
export type InboxRow = InboxEvent;

/** Columns of a worker, aliased. */
export const WORKER_COLUMNS = "worker_id AS workerId, host, pid, workflows, runs_held AS runsHeld, started_at AS startedAt, heartbeat_at AS heartbeatAt";

/** A workers row as SQLite returns it: workflows are JSON text. */
export type WorkerRow = Omit<WorkerRecord, "workflows"> & { workflows: string };

/** Maps a row selected with {@link WORKER_COLUMNS}. */
export function toWorker(row: WorkerRow): WorkerRecord {
  return { ...row, workflows: JSON.parse(row.workflows) as string[] };
}

/** Named parameters that upsert a worker. */
export function workerParams(worker: WorkerRecord): Record<string, string | number> {
  return { ...worker, workflows: JSON.stringify(worker.workflows) };
}
