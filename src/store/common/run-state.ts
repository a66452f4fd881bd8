import { agentRowsOfEntries, type AgentRowsWrite } from "./agent-rows.js";
import { ValidationError } from "../../core/errors.js";
import { newEntry, type EntryData, type JournalEntry } from "../../core/journal.js";
import { isTerminal, type RunRecord } from "../../core/run.js";
import { decodeStored } from "../../core/payloads.js";
import { decode, encode } from "../../core/serialize.js";
import type { ClaimRequest, CommitResult, CopiedEntry, NewRun } from "../../core/store.js";

/**
 * A run row without its input: everything a write needs to fence and project.
 * Stores load this instead of the whole row on the hot path, because the input
 * can be large and never changes after creation.
 */
export type RunState = Omit<RunRecord, "input">;

/** Why a write is refused, or null when the writer may append. */
export type FenceReason = Extract<CommitResult, { ok: false }>["reason"];

/**
 * The row of a freshly created run: pending, epoch 0, its `run.created` entry at seq 1; or, with
 * `run.claimFor`, the row once that worker has claimed it (see {@link newRunEntries}).
 */
export function newRunRecord(run: NewRun, now: number): RunRecord {
  const pending = pendingRecord(run, now);
  if (run.claimFor) return claimRun(pending, claimOnCreate(run.claimFor, now)).run;
  if (run.startAt !== undefined) {
    const delayed = delayedStart(run.startAt);
    return { ...pending, status: "suspended", wakeAt: delayed.wakeAt, waitingFor: encode(delayed.waitingFor), lastSeq: 2 };
  }
  return pending;
}

/** The suspension of a run created with a delayed start: a timer named `start`. */
function delayedStart(startAt: number): EntryData["run.suspended"] {
  return { wakeAt: startAt, waitingFor: [{ kind: "timer", opKey: "start", wakeAt: startAt }] };
}

/**
 * The entries of a new run: `run.created`, then `run.claimed` when it is created claimed.
 * @throws ValidationError when `run.input` is not an encoded payload.
 */
export function newRunEntries(run: NewRun, now: number): JournalEntry[] {
  const created = runCreatedEntry(run, now);
  if (!run.claimFor && run.startAt !== undefined) {
    const suspended = newEntry("run.suspended", null, delayedStart(run.startAt));
    return [created, { runId: run.runId, seq: 2, kind: suspended.kind, opKey: null, payload: suspended.payload, epoch: 0, at: now }];
  }
  if (!run.claimFor) return [created];
  return [created, claimRun(pendingRecord(run, now), claimOnCreate(run.claimFor, now)).entry];
}

function claimOnCreate(claimFor: NonNullable<NewRun["claimFor"]>, now: number): ClaimRequest {
  return { workerId: claimFor.workerId, leaseMs: claimFor.leaseMs, now, limit: 1, workflows: [] };
}

function pendingRecord(run: NewRun, now: number): RunRecord {
  return {
    runId: run.runId,
    workflow: run.workflow,
    version: run.version,
    status: "pending",
    input: run.input,
    output: null,
    error: null,
    parentRunId: run.parentRunId ?? null,
    parentOpKey: run.parentOpKey ?? null,
    wakeAt: null,
    waitingFor: null,
    leaseOwner: null,
    leaseExpiresAt: null,
    leaseEpoch: 0,
    lastSeq: 1,
    wakePending: false,
    createdAt: now,
    updatedAt: now,
    finishedAt: null,
  };
}

/** What `Store.createRunWithJournal` writes: the row, the entries with their seqs, and the search text to index. */
export interface CopiedRun {
  run: RunRecord;
  entries: JournalEntry[];
  texts: { seq: number; opKey: string; text: string }[];
  /** The agent message and tool call rows of the copied `agent.messages` entries. */
  agentRows: AgentRowsWrite[];
}

/**
 * The row and journal of a run created with a copied journal (see `Store.createRunWithJournal`):
 * `run.created` at seq 1, then the copies verbatim; pending, unclaimed, at the copies' highest epoch.
 * @throws ValidationError when `run.input` or a copied payload is not an encoded payload.
 */
export function copiedRun(run: NewRun, copies: readonly CopiedEntry[], now: number): CopiedRun {
  const created = runCreatedEntry(run, now);
  const entries: JournalEntry[] = [created];
  const texts: CopiedRun["texts"] = [];
  let epoch = 0;
  for (const copy of copies) {
    const seq = copy.seq ?? entries.at(-1)!.seq + 1;
    if (seq <= entries.at(-1)!.seq) throw new ValidationError(`The copied entries of run "${run.runId}" must have ascending seqs above 1 (got ${seq}).`);
    entries.push({ runId: run.runId, seq, kind: copy.kind, opKey: copy.opKey, payload: copy.payload, epoch: copy.epoch, at: copy.at });
    epoch = Math.max(epoch, copy.epoch);
    if (copy.kind !== "step.completed") continue;
    let text: unknown;
    try {
      text = (decode(copy.payload) as EntryData["step.completed"]).text;
    } catch (error) {
      throw new ValidationError(`The copied entry at seq ${seq} of run "${run.runId}" is not an encoded payload (${(error as Error).message}).`);
    }
    if (typeof text === "string") texts.push({ seq, opKey: copy.opKey ?? "", text });
  }
  let agentRows: AgentRowsWrite[];
  try {
    agentRows = agentRowsOfEntries(
      run.runId,
      entries.slice(1).map((entry, i) => ({ ...entry, data: copies[i]?.data })),
    );
  } catch (error) {
    throw new ValidationError(`A copied agent.messages entry of run "${run.runId}" is not an encoded payload (${(error as Error).message}).`);
  }
  return { run: { ...pendingRecord(run, now), leaseEpoch: epoch, lastSeq: entries.at(-1)!.seq }, entries, texts, agentRows };
}

/**
 * The `run.created` entry (seq 1, epoch 0) of a new run.
 * @throws ValidationError when `run.input` is not an encoded payload.
 */
export function runCreatedEntry(run: NewRun, now: number): JournalEntry {
  let input: unknown;
  try {
    input = decodeStored(run.input); // an input marked secret() stays marked in its entry; a marker stays a marker
  } catch (error) {
    throw new ValidationError(
      `The input of run "${run.runId}" is not an encoded payload (${(error as Error).message}); encode it with encode() from core/serialize.`,
    );
  }
  const data: EntryData["run.created"] = { workflow: run.workflow, version: run.version, input };
  if (run.parentRunId != null) data.parentRunId = run.parentRunId;
  if (run.parentOpKey != null) data.parentOpKey = run.parentOpKey;
  if (run.tags && Object.keys(run.tags).length > 0) data.tags = run.tags;
  if (run.continuedFrom !== undefined) data.continuedFrom = run.continuedFrom;
  if (run.startAt !== undefined && !run.claimFor) data.startAt = run.startAt;
  if (run.deadlineAt !== undefined) data.deadlineAt = run.deadlineAt;
  const entry = newEntry("run.created", null, data);
  return { runId: run.runId, seq: 1, kind: entry.kind, opKey: null, payload: entry.payload, epoch: 0, at: now };
}

/** The columns of a run's row that {@link fenceReason} reads, with the seq a plain append follows. */
export type FenceState = Pick<RunState, "status" | "leaseEpoch" | "lastSeq">;

/**
 * Checks a write against the run's row: missing, terminal, or fenced by a newer epoch. Entries may
 * be appended to a suspended or released run under its epoch (outcomes journaled after the end was
 * decided), but a `run.released` only while the run is running: a release that raced the commit of
 * the execution's suspension (an abandon on a lost renewal, say) must not land after it.
 */
export function fenceReason(run: FenceState | undefined, epoch: number, entries: readonly { kind: string }[] = []): FenceReason | null {
  if (run === undefined) return "not-found";
  if (isTerminal(run.status)) return "finished";
  if (run.leaseEpoch !== epoch) return "lease-lost";
  if (run.status !== "running" && entries.some((entry) => entry.kind === "run.released")) return "lease-lost";
  return null;
}

/**
 * What waking a run does: a suspended run becomes due now (an earlier due time is kept);
 * a pending or running run is flagged so its next suspension wakes at once; a
 * terminal run is left alone. Returns null when nothing changes.
 */
export function wakePatch(run: RunState, now: number): Partial<RunState> | null {
  switch (run.status) {
    case "suspended":
      return run.wakeAt !== null && run.wakeAt <= now ? null : { wakeAt: now, updatedAt: now };
    case "pending":
    case "running":
      return run.wakePending ? null : { wakePending: true, updatedAt: now };
    default:
      return null;
  }
}

/** True when a worker asking with `request` may claim `run` at `request.now`. */
export function isClaimable(run: RunState, request: ClaimRequest): boolean {
  if (!request.workflows.some((w) => w.name === run.workflow && w.version === run.version)) return false;
  switch (run.status) {
    case "pending":
      return true;
    case "suspended":
      return run.wakeAt !== null && run.wakeAt <= request.now;
    case "running":
      return run.leaseExpiresAt === null || run.leaseExpiresAt <= request.now;
    default:
      return false;
  }
}

/** Claim order: oldest wake-up first (`wakeAt`, else `createdAt`), then runId. */
export function claimKey(run: RunState): number {
  return run.wakeAt ?? run.createdAt;
}

/** The row and `run.claimed` entry after `request.workerId` claims `run`. */
export function claimRun<T extends RunState>(run: T, request: ClaimRequest): { run: T; entry: JournalEntry } {
  const epoch = run.leaseEpoch + 1;
  const seq = run.lastSeq + 1;
  const claimed = newEntry("run.claimed", null, { workerId: request.workerId, epoch, from: run.status });
  return {
    run: {
      ...run,
      status: "running",
      leaseEpoch: epoch,
      leaseOwner: request.workerId,
      leaseExpiresAt: request.now + request.leaseMs,
      wakePending: false,
      wakeAt: null,
      lastSeq: seq,
      updatedAt: request.now,
    },
    entry: { runId: run.runId, seq, kind: claimed.kind, opKey: null, payload: claimed.payload, epoch, at: request.now },
  };
}

/**
 * True when nobody will move `run` (see `Store.listStuckRuns`): suspended with no due time
 * and nothing to wait for, or runnable for longer than `graceMs` before `now` without being claimed —
 * pending (since its last change: creation, retry or wake-up flag), suspended and due, running with an
 * expired lease, or running with its lease released. Every store lists exactly these runs.
 */
export function isStuck(run: RunState, now: number, graceMs: number): boolean {
  const before = now - graceMs;
  switch (run.status) {
    case "pending":
      return run.updatedAt < before;
    case "suspended":
      return run.wakeAt === null ? run.waitingFor === null || run.waitingFor === NO_WAITS : run.wakeAt < before;
    case "running":
      return run.leaseExpiresAt === null ? run.updatedAt < before : run.leaseExpiresAt < before;
    default:
      return false;
  }
}

/** The encoded empty WaitDescriptor list: a suspension that waits for nothing. */
export const NO_WAITS = "[]";

/** The row after an operator action fences out the current holder: epoch + 1, lease cleared. */
export function fenceOut<T extends RunState>(run: T): T {
  return { ...run, leaseEpoch: run.leaseEpoch + 1, leaseOwner: null, leaseExpiresAt: null };
}
