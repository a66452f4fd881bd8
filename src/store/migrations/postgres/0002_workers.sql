-- Cairn store schema, version 2 (PostgreSQL): the worker registry.

-- Live workers, refreshed by their heartbeats; a worker that stops deletes its row.
CREATE TABLE workers (
  worker_id    TEXT COLLATE "C" NOT NULL PRIMARY KEY,
  host         TEXT    NOT NULL,
  pid          INTEGER NOT NULL,
  workflows    TEXT    NOT NULL,   -- JSON array of "name@version"
  runs_held    INTEGER NOT NULL,
  started_at   BIGINT  NOT NULL,
  heartbeat_at BIGINT  NOT NULL
);
CREATE INDEX workers_heartbeat_idx ON workers (heartbeat_at);
