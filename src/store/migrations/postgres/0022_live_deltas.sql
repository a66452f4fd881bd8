-- Cairn store schema, version 22 (postgres): live deltas between processes (a model's partial
-- output, never journaled, so both tables are UNLOGGED: no WAL, emptied after a database crash).
-- `live_listeners`: the runs a server streams, one row per server process (origin) and run, renewed
-- while it streams; a worker writes deltas only for those runs. `live_deltas`: the records it writes
-- (full / more / end), read by id after a NOTIFY on the live channel; a step's rows go when its
-- outcome is journaled.
CREATE UNLOGGED TABLE live_listeners (
  origin TEXT NOT NULL,
  run_id TEXT NOT NULL,
  expires_at BIGINT NOT NULL,
  PRIMARY KEY (origin, run_id)
);
CREATE UNLOGGED TABLE live_deltas (
  id BIGSERIAL PRIMARY KEY,
  run_id TEXT NOT NULL,
  op_key TEXT NOT NULL,
  attempt INTEGER NOT NULL,
  kind TEXT NOT NULL,
  origin TEXT NOT NULL,
  pieces TEXT NOT NULL,
  at BIGINT NOT NULL
);
CREATE INDEX live_deltas_run_idx ON live_deltas (run_id, id);
CREATE INDEX live_deltas_step_idx ON live_deltas (run_id, op_key, at);
