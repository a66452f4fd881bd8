-- Cairn store schema, version 1 (PostgreSQL).
-- Every table lives in the store's schema (default "cairn"): the migrator creates the schema,
-- sets search_path to it and runs this file in one transaction under an advisory lock,
-- then records it in cairn_migrations.
-- Times are epoch milliseconds (BIGINT); payloads are text written by core/serialize `encode`.
-- Ids sort with COLLATE "C" (code point order), the order every Cairn store pages and claims in.

-- One row per run: a projection of its journal plus the lease.
CREATE TABLE runs (
  run_id           TEXT COLLATE "C" NOT NULL PRIMARY KEY,
  workflow         TEXT    NOT NULL,
  version          TEXT    NOT NULL,
  status           TEXT    NOT NULL CHECK (status IN ('pending', 'running', 'suspended', 'completed', 'failed', 'cancelled')),
  input            TEXT    NOT NULL,
  output           TEXT,
  error            TEXT,
  parent_run_id    TEXT COLLATE "C",
  parent_op_key    TEXT,
  wake_at          BIGINT,             -- a suspended run is due at this time; NULL waits for a wake-up
  waiting_for      TEXT,               -- encoded WaitDescriptor[]
  lease_owner      TEXT,
  lease_expires_at BIGINT,
  lease_epoch      BIGINT  NOT NULL DEFAULT 0,   -- fencing token: bumped by every claim and operator action
  last_seq         BIGINT  NOT NULL,             -- seq of the newest journal entry, so appends never scan
  wake_pending     BOOLEAN NOT NULL DEFAULT FALSE,
  created_at       BIGINT  NOT NULL,
  updated_at       BIGINT  NOT NULL,
  finished_at      BIGINT
);

-- Listing newest first, by status, and claiming pending runs oldest first (status = 'pending' prefix).
CREATE INDEX runs_status_idx  ON runs (status, created_at, run_id);
CREATE INDEX runs_created_idx ON runs (created_at, run_id);
-- Claims: due suspensions in wake order, and expired or released leases. Partial, so parked
-- runs (suspended without a due time) and finished runs cost the claim query nothing.
CREATE INDEX runs_due_idx     ON runs (wake_at, run_id) WHERE status = 'suspended' AND wake_at IS NOT NULL;
CREATE INDEX runs_lease_idx   ON runs (lease_expires_at) WHERE status = 'running';
-- Suspensions that wait for nothing (listStuckRuns): there should never be any.
CREATE INDEX runs_stuck_idx   ON runs (created_at, run_id)
  WHERE status = 'suspended' AND wake_at IS NULL AND (waiting_for IS NULL OR waiting_for = '[]');
-- Children of a run.
CREATE INDEX runs_parent_idx  ON runs (parent_run_id, created_at, run_id) WHERE parent_run_id IS NOT NULL;

-- The append-only journal: seq 1, 2, … per run, no gaps.
CREATE TABLE journal (
  run_id  TEXT COLLATE "C" NOT NULL REFERENCES runs (run_id),
  seq     BIGINT  NOT NULL,
  kind    TEXT    NOT NULL,
  op_key  TEXT,
  payload TEXT    NOT NULL,
  epoch   BIGINT  NOT NULL,   -- lease epoch of the writer
  at      BIGINT  NOT NULL,
  PRIMARY KEY (run_id, seq)
);

-- Events sent to a run, buffered until a wait consumes them (exactly once, by event_id).
CREATE TABLE inbox (
  id           BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  run_id       TEXT COLLATE "C" NOT NULL REFERENCES runs (run_id),
  type         TEXT    NOT NULL,
  event_id     TEXT    NOT NULL,
  payload      TEXT    NOT NULL,
  consumed_seq BIGINT,             -- seq of the journal entry that consumed it
  received_at  BIGINT  NOT NULL,
  UNIQUE (run_id, event_id)
);
CREATE INDEX inbox_pending_idx ON inbox (run_id, type, id) WHERE consumed_seq IS NULL;

-- Questions for people, durable until answered.
CREATE TABLE human_requests (
  request_id  TEXT COLLATE "C" NOT NULL PRIMARY KEY,
  run_id      TEXT COLLATE "C" NOT NULL REFERENCES runs (run_id),
  op_key      TEXT    NOT NULL,
  question    TEXT    NOT NULL,
  options     TEXT    NOT NULL,     -- JSON array of strings
  status      TEXT    NOT NULL CHECK (status IN ('pending', 'answered')),
  answer      TEXT,                 -- encoded HumanAnswer
  timeout_at  BIGINT,
  created_at  BIGINT  NOT NULL,
  answered_at BIGINT
);
CREATE INDEX human_requests_status_idx ON human_requests (status, created_at, request_id);
CREATE INDEX human_requests_run_idx    ON human_requests (run_id, created_at, request_id);
