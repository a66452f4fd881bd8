-- Cairn store schema, version 11 (postgres): safe deploys.

-- Workflow versions no worker may claim runs of (`engine.drainVersion`, `cairn drain`).
-- Workers read this small table on their heartbeat, never per claim.
CREATE TABLE drained_versions (
  workflow   TEXT   NOT NULL,
  version    TEXT   NOT NULL,
  drained_at BIGINT NOT NULL,
  PRIMARY KEY (workflow, version)
);

-- Consecutive attempts of a run that ended without progress (its lease expired or was given back
-- with no outcome journaled). Only written when a run is re-claimed after such an attempt.
ALTER TABLE runs ADD COLUMN recovery_failures INTEGER NOT NULL DEFAULT 0;
