import type { EntryData, HumanAnswer, HumanNotice, JournalEntry, NewEntry } from "../../core/journal.js";
import { isTerminal, isTerminalEntry, projectEntry, type RunPatch } from "../../core/run.js";
import { encode } from "../../core/serialize.js";
import type { NewOutboxMessage } from "../../core/outbox.js";
import type { HumanRequest, InboxEvent, NewRun } from "../../core/store.js";
import { agentRowsOf, type AgentRowsWrite } from "./agent-rows.js";
import type { RunState } from "./run-state.js";

/**
 * A change an appended entry makes outside its own run row. Stores execute these
 * in order, in the transaction of the write, after updating the run row.
 */
export type SideEffect =
  /** `event.received` / `human.answered`: the inbox row is consumed by the entry at `seq`. */
  | { kind: "consume-inbox"; runId: string; inboxId: number; seq: number }
  /** `human.answered`: mark the request answered unless it already is. */
  | { kind: "answer-human"; requestId: string; answer: string; at: number }
  /** `child.started`: create the child run unless a run with its id exists. */
  | { kind: "create-run"; run: NewRun }
  /** `human.requested`: insert the pending request unless it exists. */
  | { kind: "request-human"; request: HumanRequest }
  /** A terminal entry of a child run: wake its parent. */
  | { kind: "wake"; runId: string }
  /** `human.extended`: a pending request's deadline moves. */
  | { kind: "extend-human"; requestId: string; timeoutAt: number }
  /** `step.completed` with search text: index it for `Store.searchJournal`. */
  | { kind: "index-text"; runId: string; seq: number; opKey: string; text: string }
  /** `outbox.emitted`: insert the outbox message unless one with its id exists. */
  | { kind: "insert-outbox"; message: NewOutboxMessage }
  /** A terminal entry: the run's pending human requests are closed, with its final status as the reason. */
  | { kind: "close-humans"; runId: string; reason: string; at: number }
  /** `publish.value` / `request.replied`: replace the run's value row (`Store.getRunValue`). */
  | { kind: "put-value"; runId: string; valueKind: "published" | "reply"; name: string; value: string; seq: number; at: number }
  /** `run.retried`: the requests closed when the run finished are pending again (the retried run waits on them). */
  | { kind: "reopen-humans"; runId: string }
  /** `agent.messages`: insert the agent's message rows and upsert its tool call rows (common/agent-rows.ts). */
  | { kind: "agent-rows"; rows: AgentRowsWrite }
  /** `run.continued`: the run's unconsumed inbox rows move to the run that continues it (after this write's consumptions). */
  | { kind: "move-inbox"; fromRunId: string; toRunId: string };

/** A human request as the SQL stores insert it, in column order (options as JSON text). */
export function humanRequestRow(r: HumanRequest): unknown[] {
  return [
    r.requestId,
    r.runId,
    r.opKey,
    r.question,
    JSON.stringify(r.options),
    r.status,
    r.answer,
    r.timeoutAt,
    r.createdAt,
    r.answeredAt,
    r.context ?? null,
    r.closedReason ?? null,
  ];
}

/** The outcome of planning one write: the new row, the entries to insert, and their side effects. */
export interface WritePlan<T extends RunState> {
  run: T;
  entries: JournalEntry[];
  effects: SideEffect[];
}

/**
 * Appends `entries` to `run` (already fenced by the caller): assigns seqs after
 * `lastSeq` with no gaps, applies {@link projectEntry} to the row for each, and
 * lists the side effects. Pure, so every store derives rows identically.
 */
export function planEntries<T extends RunState>(run: T, epoch: number, entries: readonly NewEntry[], now: number): WritePlan<T> {
  let next: T = { ...run };
  const journal: JournalEntry[] = [];
  const effects: SideEffect[] = [];
  for (const entry of entries) {
    const seq = next.lastSeq + 1;
    journal.push({ runId: run.runId, seq, kind: entry.kind, opKey: entry.opKey, payload: entry.payload, epoch, at: now });
    next.lastSeq = seq;
    const patch = projectEntry(entry, now);
    if (patch) next = applyPatch(next, patch);
    if (entry.kind === "run.suspended" && next.wakePending) {
      // Something arrived while the run was held: the suspension is due at once.
      next.wakeAt = next.wakeAt === null ? now : Math.min(next.wakeAt, now);
      next.wakePending = false;
    }
    effects.push(...entrySideEffects(next, entry, seq, now));
  }
  if (journal.length > 0) next.updatedAt = now;
  return { run: next, entries: journal, effects };
}

function applyPatch<T extends RunState>(run: T, patch: RunPatch): T {
  const next: T = { ...run };
  if (patch.status !== undefined) next.status = patch.status;
  if (patch.output !== undefined) next.output = patch.output;
  if (patch.error !== undefined) next.error = patch.error;
  if (patch.wakeAt !== undefined) next.wakeAt = patch.wakeAt;
  if (patch.waitingFor !== undefined) next.waitingFor = patch.waitingFor;
  if (patch.finishedAt !== undefined) next.finishedAt = patch.finishedAt;
  if (patch.releaseLease) {
    next.leaseOwner = null;
    next.leaseExpiresAt = null;
  }
  return next;
}

/** Kinds whose append has a side effect outside the row whatever the run's state (see entrySideEffects). */
const SIDE_EFFECT_KINDS = new Set([
  "event.received",
  "human.answered",
  "human.timedout",
  "human.extended",
  "child.started",
  "human.requested",
  "outbox.emitted",
  "run.retried",
  "publish.value",
  "request.replied",
  "agent.messages",
]);

/**
 * True when appending `entry` to a run that is running under a lease changes nothing but the
 * run's `lastSeq` and `updatedAt`: no projection onto the row, no side effect. Step intents and
 * results are; a store may append such entries without loading the row first.
 */
export function isPlainAppend(entry: NewEntry): boolean {
  if (SIDE_EFFECT_KINDS.has(entry.kind) || isTerminalEntry(entry.kind)) return false;
  // A result with search text is indexed in the same transaction.
  if (entry.kind === "step.completed" && (entry.data as EntryData["step.completed"]).text !== undefined) return false;
  return projectEntry(entry, 0) === null;
}

function entrySideEffects(run: RunState, entry: NewEntry, seq: number, now: number): SideEffect[] {
  switch (entry.kind) {
    case "step.completed": {
      const text = (entry.data as EntryData["step.completed"]).text;
      return text === undefined ? [] : [{ kind: "index-text", runId: run.runId, seq, opKey: entry.opKey ?? "", text }];
    }
    case "event.received": {
      const data = entry.data as EntryData["event.received"];
      return [{ kind: "consume-inbox", runId: run.runId, inboxId: data.inboxId, seq }];
    }
    case "human.answered": {
      const data = entry.data as EntryData["human.answered"];
      return [
        { kind: "consume-inbox", runId: run.runId, inboxId: data.inboxId, seq },
        { kind: "answer-human", requestId: data.requestId, answer: encode(data.answer), at: now },
      ];
    }
    case "human.timedout": {
      // The request leaves the inbox: the escalation answered it.
      const data = entry.data as EntryData["human.timedout"];
      const answer: HumanAnswer =
        data.escalation === "choose"
          ? { action: "answer", option: data.option, value: data.value, by: "timeout" }
          : { action: "fail", message: data.escalation === "cancel" ? "timed out; the run was cancelled" : "timed out", by: "timeout" };
      if (answer.option === undefined) delete answer.option;
      const answered: SideEffect = { kind: "answer-human", requestId: data.requestId, answer: encode(answer), at: now };
      return data.notify ? [answered, noticeEffect(run.runId, entry, seq, data.notify, now)] : [answered];
    }
    case "human.extended": {
      const data = entry.data as EntryData["human.extended"];
      const extended: SideEffect = { kind: "extend-human", requestId: data.requestId, timeoutAt: data.timeoutAt };
      return data.notify ? [extended, noticeEffect(run.runId, entry, seq, data.notify, now)] : [extended];
    }
    case "child.started": {
      const data = entry.data as EntryData["child.started"];
      const child: NewRun = {
        runId: data.childRunId,
        workflow: data.workflow,
        version: data.version,
        input: encode(data.input),
        parentRunId: run.runId,
        parentOpKey: entry.opKey,
        ...(data.flow ? { flow: data.flow } : {}),
        ...(data.tags ? { tags: data.tags } : {}),
      };
      return [{ kind: "create-run", run: child }];
    }
    case "outbox.emitted": {
      const data = entry.data as EntryData["outbox.emitted"];
      const message: NewOutboxMessage = {
        messageId: data.messageId,
        runId: run.runId,
        opKey: entry.opKey ?? "",
        seq,
        topic: data.topic,
        payload: encode(data.payload),
        createdAt: now,
      };
      return [{ kind: "insert-outbox", message }];
    }
    case "human.requested": {
      const data = entry.data as EntryData["human.requested"];
      const request: HumanRequest = {
        requestId: data.requestId,
        runId: run.runId,
        opKey: entry.opKey ?? "",
        question: data.question,
        options: [...data.options],
        status: "pending",
        answer: null,
        timeoutAt: data.timeoutAt,
        createdAt: now,
        answeredAt: null,
      };
      if (data.context !== undefined) request.context = encode(data.context);
      return [{ kind: "request-human", request }];
    }
    case "run.retried":
      return [{ kind: "reopen-humans", runId: run.runId }];
    case "agent.messages":
      return [{ kind: "agent-rows", rows: agentRowsOf(run.runId, seq, entry.data as EntryData["agent.messages"], now) }];
    case "publish.value": {
      const data = entry.data as EntryData["publish.value"];
      return [{ kind: "put-value", runId: run.runId, valueKind: "published", name: data.name, value: encode(data.value), seq, at: now }];
    }
    case "request.replied": {
      const data = entry.data as EntryData["request.replied"];
      const value = encode(data.error === undefined ? { reply: data.reply } : { error: data.error });
      return [{ kind: "put-value", runId: run.runId, valueKind: "reply", name: data.requestId, value, seq, at: now }];
    }
    default: {
      if (!isTerminalEntry(entry.kind) || !isTerminal(run.status)) return [];
      const close: SideEffect = { kind: "close-humans", runId: run.runId, reason: run.status, at: now };
      const effects: SideEffect[] = [close];
      if (entry.kind === "run.continued") {
        const next = continuedRun(run, entry.data as EntryData["run.continued"]);
        // Events sent but not yet taken are the new run's to take: nothing sent is lost.
        effects.push({ kind: "create-run", run: next }, { kind: "move-inbox", fromRunId: run.runId, toRunId: next.runId });
      }
      // The run that continues this one keeps its parent: the parent is woken when the chain ends.
      else if (run.parentRunId !== null) effects.push({ kind: "wake", runId: run.parentRunId });
      return effects;
    }
  }
}

/**
 * The run a `run.continued` entry creates: same workflow, parent and (from the entry) tags, linked back.
 * Its tags come from the entry's own copy so the store needs no extra read.
 */
function continuedRun(run: RunState, data: EntryData["run.continued"]): NewRun {
  return {
    runId: data.nextRunId,
    workflow: data.workflow,
    version: data.version,
    input: encode(data.input),
    parentRunId: run.parentRunId,
    parentOpKey: run.parentOpKey,
    continuedFrom: run.runId,
    ...(data.tags ? { tags: data.tags } : {}),
  };
}

/** The outbox row of an askHuman's `notify`, inserted by the commit of its extended/timed-out entry. */
function noticeEffect(runId: string, entry: NewEntry, seq: number, notice: HumanNotice, now: number): SideEffect {
  const message: NewOutboxMessage = {
    messageId: notice.messageId,
    runId,
    opKey: entry.opKey ?? "",
    seq,
    topic: notice.topic,
    payload: encode(notice.payload),
    createdAt: now,
  };
  return { kind: "insert-outbox", message };
}

/**
 * Checks that an inbox row may be consumed by `effect`. A failure is a bug in the
 * caller (the engine), so it is thrown and rolls back the whole commit.
 */
export function checkConsumable(effect: Extract<SideEffect, { kind: "consume-inbox" }>, row: Pick<InboxEvent, "runId" | "consumedSeq"> | undefined): void {
  const what = `Inbox event ${effect.inboxId} cannot be consumed by run "${effect.runId}" at seq ${effect.seq}`;
  if (row === undefined) throw new Error(`${what}: it does not exist.`);
  if (row.runId !== effect.runId) throw new Error(`${what}: it belongs to run "${row.runId}".`);
  if (row.consumedSeq !== null) throw new Error(`${what}: it was already consumed at seq ${row.consumedSeq}.`);
}
