-- Cairn store schema, version 15 (postgres): the runs whose journals someone listens to (servers
-- with open run streams), one row per listening process and run, renewed (expires_at) while it
-- listens. A commit that appends entries sends a journal NOTIFY only when one of its runs has a
-- current row, naming only those runs, so commits of runs no one streams pay nothing.
CREATE TABLE journal_listeners (
  listener_id TEXT NOT NULL,
  run_id TEXT NOT NULL,
  expires_at BIGINT NOT NULL,
  PRIMARY KEY (listener_id, run_id)
);
