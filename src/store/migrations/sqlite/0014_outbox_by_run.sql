-- Cairn store schema, version 14 (sqlite): outbox rows by run, for retention (a run with undelivered
-- messages is not pruned; a pruned run's messages are deleted with it).
CREATE INDEX outbox_run_idx ON outbox (run_id, status);
