import type { EntryData, EntryKind, NewEntry } from "./journal.js";
import { encode } from "./serialize.js";
import { TERMINAL_STATUSES, type RunStatus, type TerminalStatus } from "./run-status.js";

export { RUN_STATUSES, LIVE_STATUSES, TERMINAL_STATUSES, FAILED_STATUSES, isTerminal, isFailed, type RunStatus, type TerminalStatus } from "./run-status.js";

/**
 * Workflow names that start with this are the runtime's own (system runs, such as alert runs of
 * `cairn.alert`): listings, counts and figures meant for people leave them out
 * (`ListRunsQuery.excludeSystem`) unless a filter names their workflow.
 */
export const SYSTEM_WORKFLOW_PREFIX = "cairn.";

/** Whether `workflow` is a system workflow's name (see {@link SYSTEM_WORKFLOW_PREFIX}). */
export function isSystemWorkflow(workflow: string): boolean {
  return workflow.startsWith(SYSTEM_WORKFLOW_PREFIX);
}

/** The terminal statuses as an SQL list, `('completed', …)`, for the stores' queries. */
export const TERMINAL_STATUSES_SQL = `(${TERMINAL_STATUSES.map((status) => `'${status}'`).join(", ")})`;

/** The journal entry kind that ends a run in each terminal status: the one list of both. */
export const TERMINAL_ENTRY_KINDS: Readonly<Record<TerminalStatus, EntryKind>> = {
  completed: "run.completed",
  failed: "run.failed",
  cancelled: "run.cancelled",
  compensated: "run.compensated",
  compensation_failed: "run.compensation_failed",
  dead: "run.dead",
};

// run.continued ends a run too (completed, continued as a new run: ctx.continueAsNew).
const TERMINAL_KINDS: ReadonlySet<string> = new Set([...Object.values(TERMINAL_ENTRY_KINDS), "run.continued"]);

/** True for an entry kind that ends a run ({@link TERMINAL_ENTRY_KINDS}, and `run.continued`). */
export function isTerminalEntry(kind: string): boolean {
  return TERMINAL_KINDS.has(kind);
}

/** The first run of the continue-as-new chain `runId` belongs to, as its id says: `t` for `t`, `t~2`, `t~3`, … */
export function chainBase(runId: string): string {
  const match = /^(.*)~(\d+)$/.exec(runId);
  return match && match[1] ? match[1] : runId;
}

/** The id of the run that continues `runId` (`ctx.continueAsNew`): `<runId>~2`, then `<base>~3`, `<base>~4`, … */
export function nextRunId(runId: string): string {
  const match = /^(.*)~(\d+)$/.exec(runId);
  if (match && match[1]) return `${match[1]}~${Number(match[2]) + 1}`;
  return `${runId}~2`;
}

/**
 * The run that continues `run`, when it ended with `run.continued` (`lastKind` is the kind of its last
 * journal entry): the stores follow this link to deliver an event sent to a run that continued as new.
 */
export function successorOf(run: Pick<RunRecord, "runId" | "status">, lastKind: string | undefined): string | undefined {
  return run.status === "completed" && lastKind === "run.continued" ? nextRunId(run.runId) : undefined;
}

/** A run row as stored: a projection of the run's journal plus its lease. Payload fields are encoded. */
export interface RunRecord {
  runId: string;
  workflow: string;
  version: string;
  status: RunStatus;
  /** Encoded input. */
  input: string;
  /** Encoded output, once completed. */
  output: string | null;
  /** Encoded {@link SerializedError}, once failed or cancelled. */
  error: string | null;
  parentRunId: string | null;
  parentOpKey: string | null;
  /** When a suspended run becomes runnable again (epoch ms), or null to wait for an event, child or answer. */
  wakeAt: number | null;
  /** Encoded WaitDescriptor[] of a suspended run. */
  waitingFor: string | null;
  leaseOwner: string | null;
  leaseExpiresAt: number | null;
  leaseEpoch: number;
  lastSeq: number;
  /** Something arrived (event, child result, answer) while the run was held; its suspension must wake at once. */
  wakePending: boolean;
  createdAt: number;
  updatedAt: number;
  finishedAt: number | null;
}

/** The fields of a run row an entry changes. */
export interface RunPatch {
  status?: RunStatus;
  output?: string | null;
  error?: string | null;
  wakeAt?: number | null;
  waitingFor?: string | null;
  /** Clear the lease (owner and expiry). */
  releaseLease?: boolean;
  finishedAt?: number | null;
}

/**
 * The projection: what one journal entry does to the run row. Every store applies it,
 * so the row is derived from the journal the same way everywhere.
 */
export function projectEntry(entry: NewEntry, now: number): RunPatch | null {
  switch (entry.kind as EntryKind) {
    case "run.suspended": {
      const data = entry.data as EntryData["run.suspended"];
      return { status: "suspended", wakeAt: data.wakeAt, waitingFor: encode(data.waitingFor), releaseLease: true };
    }
    case "run.completed":
      return {
        status: "completed",
        output: encode((entry.data as EntryData["run.completed"]).output),
        wakeAt: null,
        waitingFor: null,
        releaseLease: true,
        finishedAt: now,
      };
    case "run.continued":
      return { status: "completed", output: encode(null), wakeAt: null, waitingFor: null, releaseLease: true, finishedAt: now };
    case "run.failed":
      return {
        status: "failed",
        error: encode((entry.data as EntryData["run.failed"]).error),
        wakeAt: null,
        waitingFor: null,
        releaseLease: true,
        finishedAt: now,
      };
    case "run.cancelled": {
      const reason = (entry.data as EntryData["run.cancelled"]).reason;
      const error = { name: "CancelledError", message: reason ? `Cancelled: ${reason}` : "Cancelled", code: "RUN_CANCELLED", data: { reason } };
      return { status: "cancelled", error: encode(error), wakeAt: null, waitingFor: null, releaseLease: true, finishedAt: now };
    }
    case "run.dead":
      return {
        status: "dead",
        error: encode((entry.data as EntryData["run.dead"]).error),
        wakeAt: null,
        waitingFor: null,
        releaseLease: true,
        finishedAt: now,
      };
    case "run.compensated":
    case "run.compensation_failed": {
      const data = entry.data as EntryData["run.compensated"];
      const status = entry.kind === "run.compensated" ? "compensated" : "compensation_failed";
      return { status, error: encode(data.error), wakeAt: null, waitingFor: null, releaseLease: true, finishedAt: now };
    }
    case "run.cancelling":
    case "run.retried":
    case "run.forked":
      return { status: "pending", error: null, wakeAt: null, waitingFor: null, releaseLease: true, finishedAt: null };
    case "run.released":
      return { releaseLease: true };
    default:
      return null;
  }
}
