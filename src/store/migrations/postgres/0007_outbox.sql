-- Cairn store schema, version 7 (PostgreSQL): the transactional outbox.
-- A row is inserted by the commit of the `outbox.emitted` journal entry that emitted it (same transaction),
-- then claimed by a dispatcher with FOR UPDATE SKIP LOCKED (attempts + 1, lease_owner,
-- next_attempt_at = lease expiry), delivered and settled: delivered, or failed with a retry time,
-- or dead after the last attempt.
CREATE TABLE outbox (
  id              BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  message_id      TEXT COLLATE "C" NOT NULL UNIQUE,   -- "<runId>:<opKey>": consumers deduplicate by it
  run_id          TEXT COLLATE "C" NOT NULL REFERENCES runs (run_id),
  op_key          TEXT    NOT NULL,
  seq             BIGINT  NOT NULL,                   -- the outbox.emitted entry
  topic           TEXT    NOT NULL,
  payload         TEXT    NOT NULL,                   -- encoded
  status          TEXT    NOT NULL CHECK (status IN ('pending', 'delivered', 'dead')),
  attempts        INTEGER NOT NULL DEFAULT 0,
  next_attempt_at BIGINT  NOT NULL,                   -- due time; while claimed, the claim's lease expiry
  last_error      TEXT,
  lease_owner     TEXT,
  created_at      BIGINT  NOT NULL,
  delivered_at    BIGINT
);
-- Claims: due pending messages, oldest due first. Partial, so delivered messages cost nothing.
CREATE INDEX outbox_due_idx ON outbox (next_attempt_at, id) WHERE status = 'pending';
CREATE INDEX outbox_status_idx ON outbox (status, id);
