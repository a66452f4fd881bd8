-- Cairn store schema, version 24 (postgres): an agent run's messages and tool calls as rows anyone can
-- query with SQL (docs/agent-messages.md). Both are projections of `agent.messages` journal entries,
-- written in the transaction that appends them (docs/decisions/0006-agent-rows-are-a-projection.md).
-- `agent_messages`: one row per message, `seq` 1, 2, … within the run. `content` is `json`, not
-- `jsonb`: it keeps the text byte for byte (key order included), so a resumed agent sends the model
-- exactly the prompt a live one would (provider prompt caches match on bytes); `->`, `->>` and
-- json_array_elements work on it all the same.
-- `tool_calls`: one row per tool call, keyed by its idempotency key; `status` goes from 'called'
-- (with `args`) to 'completed' or 'failed' (with `result`, what the model was told).
CREATE TABLE agent_messages (
  run_id TEXT NOT NULL,
  seq BIGINT NOT NULL,
  turn BIGINT NOT NULL,
  role TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'tool')),
  kind TEXT NOT NULL CHECK (kind IN ('message', 'summary')),
  content JSON NOT NULL,
  journal_seq BIGINT NOT NULL,
  created_at BIGINT NOT NULL,
  PRIMARY KEY (run_id, seq)
);
CREATE TABLE tool_calls (
  run_id TEXT NOT NULL,
  idempotency_key TEXT NOT NULL,
  call_id TEXT NOT NULL,
  tool TEXT NOT NULL,
  turn BIGINT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('called', 'completed', 'failed')),
  args JSON,
  result JSON,
  called_seq BIGINT NOT NULL,
  result_seq BIGINT,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL,
  PRIMARY KEY (run_id, idempotency_key)
);
CREATE INDEX tool_calls_by_seq ON tool_calls (run_id, called_seq);
