-- Cairn store schema, version 20 (sqlite): live deltas between processes (a model's partial output,
-- never journaled). `live_listeners`: the runs a server streams, one row per server process (origin)
-- and run, renewed while it streams; a worker writes deltas only for those runs. `live_deltas`: the
-- records it writes (full / more / end), read by id; a step's rows go when its outcome is journaled.
CREATE TABLE live_listeners (
  origin TEXT NOT NULL,
  run_id TEXT NOT NULL,
  expires_at INTEGER NOT NULL,
  PRIMARY KEY (origin, run_id)
);
CREATE TABLE live_deltas (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  run_id TEXT NOT NULL,
  op_key TEXT NOT NULL,
  attempt INTEGER NOT NULL,
  kind TEXT NOT NULL,
  origin TEXT NOT NULL,
  pieces TEXT NOT NULL,
  at INTEGER NOT NULL
);
CREATE INDEX live_deltas_run_idx ON live_deltas (run_id, id);
CREATE INDEX live_deltas_step_idx ON live_deltas (run_id, op_key, at);
