-- Cairn store schema, version 1 (SQLite).
-- Times are epoch milliseconds (INTEGER); payloads are text written by core/serialize `encode`.
-- The migrator runs this in one BEGIN IMMEDIATE transaction, records it in cairn_migrations
-- and stamps the file with PRAGMA application_id = 0x4341524e ("CARN").

-- One row per run: a projection of its journal plus the lease.
CREATE TABLE runs (
  run_id           TEXT    NOT NULL PRIMARY KEY,
  workflow         TEXT    NOT NULL,
  version          TEXT    NOT NULL,
  status           TEXT    NOT NULL CHECK (status IN ('pending', 'running', 'suspended', 'completed', 'failed', 'cancelled')),
  input            TEXT    NOT NULL,
  output           TEXT,
  error            TEXT,
  parent_run_id    TEXT,
  parent_op_key    TEXT,
  wake_at          INTEGER,            -- a suspended run is due at this time; NULL waits for a wake-up
  waiting_for      TEXT,               -- encoded WaitDescriptor[]
  lease_owner      TEXT,
  lease_expires_at INTEGER,
  lease_epoch      INTEGER NOT NULL DEFAULT 0,   -- fencing token: bumped by every claim and operator action
  last_seq         INTEGER NOT NULL,             -- seq of the newest journal entry, so appends never scan
  wake_pending     INTEGER NOT NULL DEFAULT 0 CHECK (wake_pending IN (0, 1)),
  created_at       INTEGER NOT NULL,
  updated_at       INTEGER NOT NULL,
  finished_at      INTEGER
);

-- Claims: pending runs oldest first, due suspended runs by wake time, expired leases.
CREATE INDEX runs_pending_idx ON runs (status, created_at, run_id);
CREATE INDEX runs_wake_idx    ON runs (status, wake_at);
CREATE INDEX runs_lease_idx   ON runs (status, lease_expires_at);
-- Listing: newest first.
CREATE INDEX runs_created_idx ON runs (created_at, run_id);
-- Children of a run.
CREATE INDEX runs_parent_idx  ON runs (parent_run_id, created_at, run_id) WHERE parent_run_id IS NOT NULL;

-- The append-only journal: seq 1, 2, … per run, no gaps.
CREATE TABLE journal (
  run_id  TEXT    NOT NULL REFERENCES runs (run_id),
  seq     INTEGER NOT NULL,
  kind    TEXT    NOT NULL,
  op_key  TEXT,
  payload TEXT    NOT NULL,
  epoch   INTEGER NOT NULL,   -- lease epoch of the writer
  at      INTEGER NOT NULL,
  PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;

-- Events sent to a run, buffered until a wait consumes them (exactly once, by event_id).
CREATE TABLE inbox (
  id           INTEGER PRIMARY KEY,
  run_id       TEXT    NOT NULL REFERENCES runs (run_id),
  type         TEXT    NOT NULL,
  event_id     TEXT    NOT NULL,
  payload      TEXT    NOT NULL,
  consumed_seq INTEGER,            -- seq of the journal entry that consumed it
  received_at  INTEGER NOT NULL,
  UNIQUE (run_id, event_id)
);
CREATE INDEX inbox_pending_idx ON inbox (run_id, type, consumed_seq);

-- Questions for people, durable until answered.
CREATE TABLE human_requests (
  request_id  TEXT    NOT NULL PRIMARY KEY,
  run_id      TEXT    NOT NULL REFERENCES runs (run_id),
  op_key      TEXT    NOT NULL,
  question    TEXT    NOT NULL,
  options     TEXT    NOT NULL,     -- JSON array of strings
  status      TEXT    NOT NULL CHECK (status IN ('pending', 'answered')),
  answer      TEXT,                 -- encoded HumanAnswer
  timeout_at  INTEGER,
  created_at  INTEGER NOT NULL,
  answered_at INTEGER
);
CREATE INDEX human_requests_status_idx ON human_requests (status, created_at);
CREATE INDEX human_requests_run_idx    ON human_requests (run_id, created_at);
