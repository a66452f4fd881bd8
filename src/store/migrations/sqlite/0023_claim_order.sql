-- Cairn store schema, version 23 (sqlite): FIFO within a priority, even for runs created in the same
-- millisecond. A queue's claim order is priority, then time, then the rowid (insertion order) instead
-- of the run id (a random id broke ties at random). SQLite ends every index with the rowid, so the
-- indexes drop their run_id column and still give that order without a sort.
DROP INDEX runs_queue_pending_idx;
DROP INDEX runs_queue_due_idx;
CREATE INDEX runs_queue_pending_idx ON runs (queue, priority DESC, created_at) WHERE queue IS NOT NULL AND status = 'pending';
CREATE INDEX runs_queue_due_idx ON runs (queue, priority DESC, wake_at) WHERE queue IS NOT NULL AND status = 'suspended' AND wake_at IS NOT NULL;
