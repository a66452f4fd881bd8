import type { EntryKind, JournalEntry } from "../../core/journal.js";
import type { RunRecord, RunStatus } from "../../core/run.js";
import type { InboxEvent, WorkerRecord } from "../../core/store.js";
import type { RunState } from "../common/run-state.js";

// PostgreSQL folds unquoted aliases to lower case, so every alias is quoted. BIGINT columns
// come back as numbers (the pool's int8 parser), BOOLEAN as booleans.

const STATE_FIELDS: readonly (readonly [column: string, field: keyof RunState])[] = [
  ["run_id", "runId"],
  ["workflow", "workflow"],
  ["version", "version"],
  ["status", "status"],
  ["output", "output"],
  ["error", "error"],
  ["parent_run_id", "parentRunId"],
  ["parent_op_key", "parentOpKey"],
  ["wake_at", "wakeAt"],
  ["waiting_for", "waitingFor"],
  ["lease_owner", "leaseOwner"],
  ["lease_expires_at", "leaseExpiresAt"],
  ["lease_epoch", "leaseEpoch"],
  ["last_seq", "lastSeq"],
  ["wake_pending", "wakePending"],
  ["created_at", "createdAt"],
  ["updated_at", "updatedAt"],
  ["finished_at", "finishedAt"],
];

/** Columns of a {@link RunState} of table alias `table` (if given), aliased to its field names. */
export function stateColumns(table?: string): string {
  const prefix = table === undefined ? "" : `${table}.`;
  return STATE_FIELDS.map(([column, field]) => `${prefix}${column} AS "${field}"`).join(", ");
}

/** Columns of a {@link RunState} (the input is left out: it can be large). */
export const STATE_COLUMNS = stateColumns();

/** Columns of a whole {@link RunRecord}. */
export const RUN_COLUMNS = `${STATE_COLUMNS}, input`;

/** A runs row as selected with {@link STATE_COLUMNS}. */
export type StateRow = Omit<RunState, "status"> & { status: string };

/** Maps a row selected with {@link STATE_COLUMNS}. */
export function toState(row: StateRow): RunState {
  return { ...row, status: row.status as RunStatus };
}

/** Maps a row selected with {@link RUN_COLUMNS}. */
export function toRun(row: StateRow & { input: string }): RunRecord {
  return { ...row, status: row.status as RunStatus };
}

/** Parameters of `UPDATE_STATES`: one array per mutable column, in placeholder order. */
export function stateArrays(runs: readonly RunState[]): unknown[] {
  return [
    runs.map((r) => r.runId),
    runs.map((r) => r.status),
    runs.map((r) => r.output),
    runs.map((r) => r.error),
    runs.map((r) => r.wakeAt),
    runs.map((r) => r.waitingFor),
    runs.map((r) => r.leaseOwner),
    runs.map((r) => r.leaseExpiresAt),
    runs.map((r) => r.leaseEpoch),
    runs.map((r) => r.lastSeq),
    runs.map((r) => r.wakePending),
    runs.map((r) => r.updatedAt),
    runs.map((r) => r.finishedAt),
  ];
}

/** Parameters of `INSERT_RUN`, in placeholder order. */
export function runValues(run: RunRecord): unknown[] {
  return [
    run.runId,
    run.workflow,
    run.version,
    run.status,
    run.input,
    run.output,
    run.error,
    run.parentRunId,
    run.parentOpKey,
    run.wakeAt,
    run.waitingFor,
    run.leaseOwner,
    run.leaseExpiresAt,
    run.leaseEpoch,
    run.lastSeq,
    run.wakePending,
    run.createdAt,
    run.updatedAt,
    run.finishedAt,
  ];
}

/** Parameters of `INSERT_RUNS`: one array per column of {@link runValues}. */
export function runArrays(runs: readonly RunRecord[]): unknown[] {
  const rows = runs.map(runValues);
  return Array.from({ length: 19 }, (_, column) => rows.map((row) => row[column]));
}

/** Parameters of `INSERT_ENTRIES`: one array per column. */
export function entryArrays(entries: readonly JournalEntry[]): unknown[] {
  return [
    entries.map((e) => e.runId),
    entries.map((e) => e.seq),
    entries.map((e) => e.kind),
    entries.map((e) => e.opKey),
    entries.map((e) => e.payload),
    entries.map((e) => e.epoch),
    entries.map((e) => e.at),
  ];
}

/** Columns of a journal entry, aliased. */
export const ENTRY_COLUMNS = `run_id AS "runId", seq, kind, op_key AS "opKey", payload, epoch, at`;

/** A journal row as selected with {@link ENTRY_COLUMNS}. */
export type EntryRow = Omit<JournalEntry, "kind"> & { kind: string };

/** Maps a row selected with {@link ENTRY_COLUMNS}. */
export function toEntry(row: EntryRow): JournalEntry {
  return { ...row, kind: row.kind as EntryKind };
}

/** Columns of an inbox event, aliased. */
export const INBOX_COLUMNS = `id, run_id AS "runId", type, event_id AS "eventId", payload, consumed_seq AS "consumedSeq", received_at AS "receivedAt"`;

/** An inbox row as selected with {@link INBOX_COLUMNS}. */
export type InboxRow = InboxEvent;

/** Columns of a human request, aliased. */
export const HUMAN_COLUMNS = `request_id AS "requestId", run_id AS "runId", op_key AS "opKey", question, options, status, answer,
  timeout_at AS "timeoutAt", created_at AS "createdAt", answered_at AS "answeredAt", context, closed_reason AS "closedReason"`;

/** A human_requests row as selected with {@link HUMAN_COLUMNS}: options are JSON text. */
export { toHuman, type HumanRow } from "../common/human-rows.js";

/** Columns of a worker, aliased. */
export const WORKER_COLUMNS = `worker_id AS "workerId", host, pid, workflows, runs_held AS "runsHeld", started_at AS "startedAt", heartbeat_at AS "heartbeatAt"`;

/** A workers row as selected with {@link WORKER_COLUMNS}: workflows are JSON text. */
export type WorkerRow = Omit<WorkerRecord, "workflows"> & { workflows: string };

/** Maps a row selected with {@link WORKER_COLUMNS}. */
export function toWorker(row: WorkerRow): WorkerRecord {
  return { ...row, workflows: JSON.parse(row.workflows) as string[] };
}
