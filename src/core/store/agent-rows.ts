/**
 * An agent run's messages and tool calls as SQL-readable rows (`agent_messages`, `tool_calls`): a
 * projection of its `agent.messages` journal entries, written in the same transaction as them, copied
 * by forks and imports, deleted with the run. Part of the {@link Store} port.
 */
export interface AgentRowStore {
  /**
   * An agent run's messages in `seq` order, those with `fromSeq ≤ seq ≤ throughSeq` (both optional),
   * at most `limit` (default: all). Reads an index range: its cost follows what it returns.
   */
  readAgentMessages(runId: string, options?: { fromSeq?: number; throughSeq?: number; limit?: number }): Promise<AgentMessageRow[]>;
  /** An agent run's tool calls, in the order they were made. */
  listToolCalls(runId: string): Promise<ToolCallRow[]>;
}

/** A row of `agent_messages`. */
export interface AgentMessageRow {
  runId: string;
  /** 1, 2, … within the run, in the order the agent appended its messages. */
  seq: number;
  /** The loop iteration (turn index, from 0) that appended it. */
  turn: number;
  role: "user" | "assistant" | "tool";
  /** `message`, or `summary` for a summary that replaced earlier messages in the context window. */
  kind: "message" | "summary";
  /** The content as JSON text (a value marked `secret()` is tagged `{"$cairn":"secret","v":…}`, as in the journal). */
  content: string;
  /** The seq of the journal entry that appended it. */
  journalSeq: number;
  createdAt: number;
}

/** A row of `tool_calls`, keyed by the run and the call's idempotency key. */
export interface ToolCallRow {
  runId: string;
  idempotencyKey: string;
  callId: string;
  tool: string;
  turn: number;
  /** `called` until its result is appended, then `completed` or `failed` (an error result). */
  status: "called" | "completed" | "failed";
  /** The arguments as JSON text. */
  args: string | null;
  /** The result the model was told, as JSON text; null while `called`. */
  result: string | null;
  /** Journal seqs of the entries that made and answered it. */
  calledSeq: number;
  resultSeq: number | null;
  createdAt: number;
  updatedAt: number;
}
