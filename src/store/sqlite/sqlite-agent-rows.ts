import type Database from "better-sqlite3";
import type { AgentMessageRow, ToolCallRow } from "../../core/store/agent-rows.js";
import { AGENT_ROWS_SQL, messageBounds, messageParams, toolCallParams, type AgentRowsWrite } from "../common/agent-rows.js";

/** `$1, $2, …` (each once, in order) as SQLite's `?`. */
const positional = (sql: string): string => sql.replace(/\$\d+/g, "?");

/**
 * An agent run's message and tool call rows for {@link SqliteStore} (see `store/common/agent-rows.ts`).
 * Writes run inside the caller's transaction.
 */
export class SqliteAgentRows {
  private readonly insertMessage: Database.Statement;
  private readonly upsertToolCall: Database.Statement;
  private readonly readMessages: Database.Statement;
  private readonly listCalls: Database.Statement;

  constructor(db: Database.Database) {
    this.insertMessage = db.prepare(positional(AGENT_ROWS_SQL.insertMessage));
    this.upsertToolCall = db.prepare(positional(AGENT_ROWS_SQL.upsertToolCall));
    this.readMessages = db.prepare(positional(AGENT_ROWS_SQL.readMessages));
    this.listCalls = db.prepare(positional(AGENT_ROWS_SQL.listToolCalls));
  }

  /** Writes the rows of one `agent.messages` entry. */
  apply(rows: AgentRowsWrite): void {
    for (const message of rows.messages) this.insertMessage.run(...messageParams(message));
    for (const call of rows.toolCalls) this.upsertToolCall.run(...toolCallParams(call));
  }

  /** See `Store.readAgentMessages`. */
  read(runId: string, options?: { fromSeq?: number; throughSeq?: number; limit?: number }): AgentMessageRow[] {
    return this.readMessages.all(runId, ...messageBounds(options)) as AgentMessageRow[];
  }

  /** See `Store.listToolCalls`. */
  toolCalls(runId: string): ToolCallRow[] {
    return this.listCalls.all(runId) as ToolCallRow[];
  }
}
