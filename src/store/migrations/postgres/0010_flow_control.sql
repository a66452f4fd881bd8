-- Cairn store schema, version 10 (PostgreSQL): flow control. A run may belong to a queue, with a
-- concurrency key and a priority. Queued claims take a transaction advisory lock on the queue, then
-- count the queue's running runs, so two claimers on two connections cannot both take the last slot.
-- started_at (first claim of a queued run) feeds the rate limit.
ALTER TABLE runs ADD COLUMN queue TEXT COLLATE "C";
ALTER TABLE runs ADD COLUMN concurrency_key TEXT COLLATE "C";
ALTER TABLE runs ADD COLUMN priority INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN started_at BIGINT;

-- The unqueued claim reads pending and due runs with "queue IS NULL" from partial indexes that hold
-- only those, in claim order, so runs waiting in a queue never lengthen its scan. The due index
-- replaces the one of 0001 (same predicate plus queue IS NULL); queued due runs have their own.
CREATE INDEX runs_pending_unqueued_idx ON runs (created_at, run_id) WHERE status = 'pending' AND queue IS NULL;
DROP INDEX runs_due_idx;
CREATE INDEX runs_due_idx ON runs (wake_at, run_id) WHERE status = 'suspended' AND wake_at IS NOT NULL AND queue IS NULL;

-- Queued claims: candidates in claim order, running counts per queue and per key, starts in a window.
CREATE INDEX runs_queue_pending_idx ON runs (queue, priority DESC, created_at, run_id) WHERE queue IS NOT NULL AND status = 'pending';
CREATE INDEX runs_queue_due_idx ON runs (queue, priority DESC, wake_at, run_id) WHERE queue IS NOT NULL AND status = 'suspended' AND wake_at IS NOT NULL;
CREATE INDEX runs_queue_running_idx ON runs (queue, concurrency_key) WHERE queue IS NOT NULL AND status = 'running';
CREATE INDEX runs_queue_started_idx ON runs (queue, started_at) WHERE queue IS NOT NULL AND started_at IS NOT NULL;

-- Debounce by key: at most one run per (workflow, key) that has not started (never claimed: epoch 0).
ALTER TABLE runs ADD COLUMN debounce_key TEXT COLLATE "C";
CREATE UNIQUE INDEX runs_debounce_idx ON runs (workflow, debounce_key) WHERE debounce_key IS NOT NULL AND lease_epoch = 0;
