-- Cairn store schema, version 6 (PostgreSQL): the run statuses of sagas and of the dead-letter state.
ALTER TABLE runs DROP CONSTRAINT runs_status_check;
ALTER TABLE runs ADD CONSTRAINT runs_status_check CHECK (status IN ('pending', 'running', 'suspended', 'completed', 'failed',
  'cancelled', 'compensated', 'compensation_failed', 'dead'));
