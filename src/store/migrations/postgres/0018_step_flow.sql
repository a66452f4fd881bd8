-- Cairn store schema, version 17 (PostgreSQL): flow control of steps (core/step-flow.ts). A bucket is
-- one limit's counter (`rate:<name>:<key>` or `concurrency:<name>:<key>`), shared by every worker.
-- A request serialises on a transaction-scoped advisory lock of its buckets. A concurrency slot is
-- held by (run, op) at a lease epoch: it counts only while that run is running at that epoch with an
-- unexpired lease, so a crashed holder's slot frees when its lease does.
CREATE TABLE step_flow_slots (
  bucket      TEXT   NOT NULL,
  run_id      TEXT   NOT NULL,
  op_key      TEXT   NOT NULL,
  epoch       BIGINT NOT NULL,
  acquired_at BIGINT NOT NULL,
  PRIMARY KEY (bucket, run_id, op_key)
);
-- One row per start a rate limit counted; rows older than the window are deleted as they pass.
CREATE TABLE step_flow_hits (
  id     BIGSERIAL PRIMARY KEY,
  bucket TEXT   NOT NULL,
  at     BIGINT NOT NULL
);
CREATE INDEX step_flow_hits_window ON step_flow_hits (bucket, at);
-- Ops waiting for a slot, served first come, first served (since, then id).
CREATE TABLE step_flow_waiters (
  id     BIGSERIAL PRIMARY KEY,
  bucket TEXT   NOT NULL,
  run_id TEXT   NOT NULL,
  op_key TEXT   NOT NULL,
  since  BIGINT NOT NULL,
  UNIQUE (bucket, run_id, op_key)
);
CREATE INDEX step_flow_waiters_order ON step_flow_waiters (bucket, since, id);
