-- Cairn store schema, version 2 (SQLite): the worker registry, and an index for stuck runs.

-- Live workers, refreshed by their heartbeats; a worker that stops deletes its row.
CREATE TABLE workers (
  worker_id    TEXT    NOT NULL PRIMARY KEY,
  host         TEXT    NOT NULL,
  pid          INTEGER NOT NULL,
  workflows    TEXT    NOT NULL,   -- JSON array of "name@version"
  runs_held    INTEGER NOT NULL,
  started_at   INTEGER NOT NULL,
  heartbeat_at INTEGER NOT NULL
);
CREATE INDEX workers_heartbeat_idx ON workers (heartbeat_at);

-- Suspended runs that wait for nothing: there should never be any, so this index stays empty.
CREATE INDEX runs_stuck_idx ON runs (created_at, run_id)
  WHERE status = 'suspended' AND wake_at IS NULL AND (waiting_for IS NULL OR waiting_for = '[]');
