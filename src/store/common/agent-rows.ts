import type { EntryData, EntryKind, ToolCallRecord } from "../../core/journal.js";
import { decodeKeepingSecrets, encode } from "../../core/serialize.js";
import type { AgentMessageRow, ToolCallRow } from "../../core/store/agent-rows.js";

/**
 * The rows one `agent.messages` entry writes: messages to insert and tool calls to upsert (a call's
 * `called` row, then its result over it). Every store applies it in the transaction of the append.
 */
export interface AgentRowsWrite {
  messages: AgentMessageRow[];
  /** `status: "called"` inserts; a result updates status, result and result seq (inserting if the call was never recorded). */
  toolCalls: ToolCallRow[];
}

/** Decoded agent rows of an entry whose payload is `agent.messages`: what the append, a fork's copy and an import write. */
export function agentRowsOf(runId: string, journalSeq: number, data: EntryData["agent.messages"], at: number): AgentRowsWrite {
  const messages: AgentMessageRow[] = (data.messages ?? []).map((m) => ({
    runId,
    seq: m.seq,
    turn: m.turn,
    role: m.role,
    kind: m.kind === "summary" ? "summary" : "message",
    content: encode(m.content ?? null),
    journalSeq,
    createdAt: at,
  }));
  const toolCalls: ToolCallRow[] = (withToolCallValues(data).toolCalls ?? []).map((c) => ({
    runId,
    idempotencyKey: c.idempotencyKey,
    callId: c.callId,
    tool: c.tool,
    turn: c.turn,
    status: c.status,
    args: c.args === undefined ? null : encode(c.args),
    result: c.result === undefined ? null : encode(c.result),
    calledSeq: journalSeq,
    resultSeq: c.status === "called" ? null : journalSeq,
    createdAt: at,
    updatedAt: at,
  }));
  return { messages, toolCalls };
}

/**
 * The entry with every tool call record's values filled in. Since decision 0007 a record leaves them
 * out: the arguments of a `called` record are the `input` of the entry's `tool_use` block with its
 * call id, the result of an answered one the `content` of its `tool_result` block (repeated ids, as
 * when a provider numbers calls per response, are matched in order). Records of earlier runs carry
 * `args` / `result` themselves, and those are kept. Called before the values are encoded or sealed.
 */
export function withToolCallValues(data: EntryData["agent.messages"]): EntryData["agent.messages"] {
  if (!data.toolCalls || data.toolCalls.every((c) => (c.status === "called" ? c.args !== undefined : c.result !== undefined))) return data;
  const found = new Map<string, unknown[]>();
  const push = (key: string, value: unknown) => {
    const list = found.get(key);
    if (list) list.push(value);
    else found.set(key, [value]);
  };
  for (const message of data.messages ?? []) {
    if (!Array.isArray(message.content)) continue;
    for (const block of message.content as { type?: unknown; id?: unknown; input?: unknown; toolUseId?: unknown; content?: unknown }[]) {
      if (block?.type === "tool_use" && typeof block.id === "string") push(`tool_use ${block.id}`, block.input);
      else if (block?.type === "tool_result" && typeof block.toolUseId === "string") push(`tool_result ${block.toolUseId}`, block.content);
    }
  }
  const take = (key: string): unknown => found.get(key)?.shift();
  const toolCalls = data.toolCalls.map((c): ToolCallRecord => {
    if (c.status === "called") {
      if (c.args !== undefined) return c;
      const args = take(`tool_use ${c.callId}`);
      return args === undefined ? c : { ...c, args };
    }
    if (c.result !== undefined) return c;
    const result = take(`tool_result ${c.callId}`);
    return result === undefined ? c : { ...c, result };
  });
  return { ...data, toolCalls };
}

/**
 * The agent rows of copied or imported journal entries (a fork, an import), decoded from their
 * payloads; `data` is used instead when the caller has it (the payload may be a blob reference).
 */
export function agentRowsOfEntries(
  runId: string,
  entries: readonly { seq: number; kind: EntryKind; payload: string; at: number; data?: unknown }[],
): AgentRowsWrite[] {
  const writes: AgentRowsWrite[] = [];
  for (const entry of entries) {
    if (entry.kind !== "agent.messages") continue;
    const data = (entry.data ?? decodeKeepingSecrets(entry.payload)) as EntryData["agent.messages"] | null;
    if (data && typeof data === "object" && Array.isArray(data.messages)) writes.push(agentRowsOf(runId, entry.seq, data, entry.at));
  }
  return writes;
}

/** A tool call row after `next` (a call or its result) is applied over `previous` (the row so far, if any). */
export function mergeToolCall(previous: ToolCallRow | undefined, next: ToolCallRow): ToolCallRow {
  if (!previous) return next;
  return { ...previous, status: next.status, result: next.result, resultSeq: next.resultSeq, updatedAt: next.updatedAt };
}

/** SQL of the agent rows, the same on SQLite and PostgreSQL (positional `$n` is rewritten for SQLite by the caller). */
export const AGENT_ROWS_SQL = {
  insertMessage: `INSERT INTO agent_messages (run_id, seq, turn, role, kind, content, journal_seq, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
  upsertToolCall: `INSERT INTO tool_calls (run_id, idempotency_key, call_id, tool, turn, status, args, result, called_seq, result_seq, created_at, updated_at)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
    ON CONFLICT (run_id, idempotency_key) DO UPDATE SET status = excluded.status, result = excluded.result, result_seq = excluded.result_seq, updated_at = excluded.updated_at`,
  readMessages: `SELECT run_id AS "runId", seq, turn, role, kind, content, journal_seq AS "journalSeq", created_at AS "createdAt"
    FROM agent_messages WHERE run_id = $1 AND seq >= $2 AND seq <= $3 ORDER BY seq LIMIT $4`,
  listToolCalls: `SELECT run_id AS "runId", idempotency_key AS "idempotencyKey", call_id AS "callId", tool, turn, status, args, result,
    called_seq AS "calledSeq", result_seq AS "resultSeq", created_at AS "createdAt", updated_at AS "updatedAt"
    FROM tool_calls WHERE run_id = $1 ORDER BY called_seq, created_at, idempotency_key`,
} as const;

/** A message row's parameters in {@link AGENT_ROWS_SQL} order. */
export const messageParams = (m: AgentMessageRow): unknown[] => [m.runId, m.seq, m.turn, m.role, m.kind, m.content, m.journalSeq, m.createdAt];

/** A tool call row's parameters in {@link AGENT_ROWS_SQL} order. */
export const toolCallParams = (c: ToolCallRow): unknown[] => [
  c.runId,
  c.idempotencyKey,
  c.callId,
  c.tool,
  c.turn,
  c.status,
  c.args,
  c.result,
  c.calledSeq,
  c.resultSeq,
  c.createdAt,
  c.updatedAt,
];

/** `readAgentMessages` options as the bounds of {@link AGENT_ROWS_SQL}.readMessages. */
export function messageBounds(options: { fromSeq?: number; throughSeq?: number; limit?: number } = {}): [number, number, number] {
  return [options.fromSeq ?? 0, options.throughSeq ?? Number.MAX_SAFE_INTEGER, options.limit ?? Number.MAX_SAFE_INTEGER];
}
