import type { AgentMessageRow, ToolCallRow } from "../../core/store/agent-rows.js";
import { mergeToolCall, messageBounds, type AgentRowsWrite } from "../common/agent-rows.js";
import type { MemoryTables } from "./memory-tables.js";

/** The map of `runId` in `maps`, made on first use (an empty map left behind by a rollback is harmless). */
function mapOf<K, V>(maps: Map<string, Map<K, V>>, runId: string): Map<K, V> {
  let map = maps.get(runId);
  if (!map) maps.set(runId, (map = new Map()));
  return map;
}

/** Writes the rows of one `agent.messages` entry, undoable with the surrounding `t.atomic`. A repeated seq fails like a primary key. */
export function applyAgentRows(t: MemoryTables, rows: AgentRowsWrite): void {
  for (const message of rows.messages) {
    const messages = mapOf(t.agentMessages, message.runId);
    if (messages.has(message.seq)) throw new Error(`agent_messages: run "${message.runId}" already has a message with seq ${message.seq}.`);
    t.putIn(messages, message.seq, { ...message });
  }
  for (const call of rows.toolCalls) {
    const calls = mapOf(t.toolCalls, call.runId);
    t.putIn(calls, call.idempotencyKey, mergeToolCall(calls.get(call.idempotencyKey), call));
  }
}

/** See `Store.readAgentMessages`. */
export function readAgentMessages(t: MemoryTables, runId: string, options?: { fromSeq?: number; throughSeq?: number; limit?: number }): AgentMessageRow[] {
  const [from, through, limit] = messageBounds(options);
  const rows = [...(t.agentMessages.get(runId)?.values() ?? [])].filter((row) => row.seq >= from && row.seq <= through).sort((a, b) => a.seq - b.seq);
  return rows.slice(0, limit).map((row) => ({ ...row }));
}

/** See `Store.listToolCalls`. */
export function listToolCalls(t: MemoryTables, runId: string): ToolCallRow[] {
  return [...(t.toolCalls.get(runId)?.values() ?? [])]
    .sort((a, b) => a.calledSeq - b.calledSeq || a.createdAt - b.createdAt || (a.idempotencyKey < b.idempotencyKey ? -1 : 1))
    .map((row) => ({ ...row }));
}
