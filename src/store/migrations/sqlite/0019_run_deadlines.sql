-- Cairn store schema, version 18 (sqlite): run deadlines (`engine.start(…, { deadline })`), a durable
-- timer row written with the run; workers cancel runs whose deadline fell due (reason "deadline").
CREATE TABLE run_deadlines (
  run_id TEXT PRIMARY KEY,
  due_at INTEGER NOT NULL
);
CREATE INDEX run_deadlines_due_idx ON run_deadlines (due_at);
