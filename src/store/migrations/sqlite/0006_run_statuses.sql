-- Cairn store schema, version 6 (SQLite): the run statuses of sagas and of the dead-letter state
-- (compensated, compensation_failed, dead). SQLite cannot alter a CHECK constraint, so the runs
-- table is rebuilt the documented way: the migrator runs with foreign_keys OFF and checks
-- PRAGMA foreign_key_check before it commits.
CREATE TABLE runs_new (
  run_id           TEXT    NOT NULL PRIMARY KEY,
  workflow         TEXT    NOT NULL,
  version          TEXT    NOT NULL,
  status           TEXT    NOT NULL CHECK (status IN ('pending', 'running', 'suspended', 'completed', 'failed', 'cancelled',
                                                      'compensated', 'compensation_failed', 'dead')),
  input            TEXT    NOT NULL,
  output           TEXT,
  error            TEXT,
  parent_run_id    TEXT,
  parent_op_key    TEXT,
  wake_at          INTEGER,
  waiting_for      TEXT,
  lease_owner      TEXT,
  lease_expires_at INTEGER,
  lease_epoch      INTEGER NOT NULL DEFAULT 0,
  last_seq         INTEGER NOT NULL,
  wake_pending     INTEGER NOT NULL DEFAULT 0 CHECK (wake_pending IN (0, 1)),
  created_at       INTEGER NOT NULL,
  updated_at       INTEGER NOT NULL,
  finished_at      INTEGER
);
INSERT INTO runs_new (run_id, workflow, version, status, input, output, error, parent_run_id, parent_op_key, wake_at,
                      waiting_for, lease_owner, lease_expires_at, lease_epoch, last_seq, wake_pending, created_at,
                      updated_at, finished_at)
  SELECT run_id, workflow, version, status, input, output, error, parent_run_id, parent_op_key, wake_at,
         waiting_for, lease_owner, lease_expires_at, lease_epoch, last_seq, wake_pending, created_at,
         updated_at, finished_at
    FROM runs;
DROP TABLE runs;
ALTER TABLE runs_new RENAME TO runs;

CREATE INDEX runs_pending_idx ON runs (status, created_at, run_id);
CREATE INDEX runs_wake_idx    ON runs (status, wake_at);
CREATE INDEX runs_lease_idx   ON runs (status, lease_expires_at);
CREATE INDEX runs_created_idx ON runs (created_at, run_id);
CREATE INDEX runs_parent_idx  ON runs (parent_run_id, created_at, run_id) WHERE parent_run_id IS NOT NULL;
CREATE INDEX runs_stuck_idx ON runs (created_at, run_id)
  WHERE status = 'suspended' AND wake_at IS NULL AND (waiting_for IS NULL OR waiting_for = '[]');
