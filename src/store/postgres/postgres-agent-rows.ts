import { messageParams, toolCallParams, type AgentRowsWrite } from "../common/agent-rows.js";
import { INSERT_MESSAGES, UPSERT_TOOL_CALLS } from "./postgres-agent-rows-queries.js";
import type { Tx } from "./postgres-tx.js";

// An agent run's message and tool call rows for the PostgreSQL store (see `store/common/agent-rows.ts`): one statement
// per table and write, in postgres-agent-rows-queries.ts.

/** Rows' parameters as one array per column, for `unnest`. */
function columns(rows: readonly unknown[][]): unknown[][] {
  return rows[0]!.map((_, i) => rows.map((row) => row[i]));
}

/** Writes the rows of one `agent.messages` entry in the caller's transaction (parameters in the order of `store/common/agent-rows.ts`). */
export async function applyAgentRows(tx: Tx, rows: AgentRowsWrite): Promise<void> {
  if (rows.messages.length > 0) await tx.query(INSERT_MESSAGES, columns(rows.messages.map(messageParams)));
  if (rows.toolCalls.length > 0) await tx.query(UPSERT_TOOL_CALLS, columns(rows.toolCalls.map(toolCallParams)));
}
