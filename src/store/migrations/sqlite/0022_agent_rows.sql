-- Cairn store schema, version 22 (sqlite): an agent run's messages and tool calls as rows anyone can
-- query with SQL (docs/agent-messages.md). Both are projections of `agent.messages` journal entries,
-- written in the transaction that appends them (docs/decisions/0006-agent-rows-are-a-projection.md).
-- `agent_messages`: one row per message, `seq` 1, 2, … within the run; `content` is JSON text.
-- `tool_calls`: one row per tool call, keyed by its idempotency key; `status` goes from 'called'
-- (with `args`) to 'completed' or 'failed' (with `result`, what the model was told).
CREATE TABLE agent_messages (
  run_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  turn INTEGER NOT NULL,
  role TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'tool')),
  kind TEXT NOT NULL CHECK (kind IN ('message', 'summary')),
  content TEXT NOT NULL,
  journal_seq INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;
CREATE TABLE tool_calls (
  run_id TEXT NOT NULL,
  idempotency_key TEXT NOT NULL,
  call_id TEXT NOT NULL,
  tool TEXT NOT NULL,
  turn INTEGER NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('called', 'completed', 'failed')),
  args TEXT,
  result TEXT,
  called_seq INTEGER NOT NULL,
  result_seq INTEGER,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (run_id, idempotency_key)
) WITHOUT ROWID;
CREATE INDEX tool_calls_by_seq ON tool_calls (run_id, called_seq);
