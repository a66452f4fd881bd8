-- Cairn store schema, version 7 (SQLite): the transactional outbox.
-- A row is inserted by the commit of the `outbox.emitted` journal entry that emitted it (same transaction),
-- then claimed by a dispatcher (attempts + 1, lease_owner, next_attempt_at = lease expiry), delivered
-- and settled: delivered, or failed with a retry time, or dead after the last attempt.
CREATE TABLE outbox (
  id              INTEGER PRIMARY KEY AUTOINCREMENT,
  message_id      TEXT    NOT NULL UNIQUE,   -- "<runId>:<opKey>": consumers deduplicate by it
  run_id          TEXT    NOT NULL REFERENCES runs (run_id),
  op_key          TEXT    NOT NULL,
  seq             INTEGER NOT NULL,          -- the outbox.emitted entry
  topic           TEXT    NOT NULL,
  payload         TEXT    NOT NULL,          -- encoded
  status          TEXT    NOT NULL CHECK (status IN ('pending', 'delivered', 'dead')),
  attempts        INTEGER NOT NULL DEFAULT 0,
  next_attempt_at INTEGER NOT NULL,          -- due time; while claimed, the claim's lease expiry
  last_error      TEXT,
  lease_owner     TEXT,
  created_at      INTEGER NOT NULL,
  delivered_at    INTEGER
);
-- Claims: due pending messages, oldest due first. Partial, so delivered messages cost nothing.
CREATE INDEX outbox_due_idx ON outbox (next_attempt_at, id) WHERE status = 'pending';
CREATE INDEX outbox_status_idx ON outbox (status, id);
