-- Cairn store schema, version 10 (SQLite): flow control. A run may belong to a queue, with a
-- concurrency key and a priority; claims count the queue's running runs inside the claim's write
-- transaction. started_at (first claim of a queued run) feeds the rate limit.
ALTER TABLE runs ADD COLUMN queue TEXT;
ALTER TABLE runs ADD COLUMN concurrency_key TEXT;
ALTER TABLE runs ADD COLUMN priority INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN started_at INTEGER;

-- The unqueued claim reads pending and due runs with "queue IS NULL": put queue right after status so
-- that stays an index seek in claim order, however many queued runs wait for a slot.
DROP INDEX runs_pending_idx;
CREATE INDEX runs_pending_idx ON runs (status, queue, created_at, run_id);
DROP INDEX runs_wake_idx;
CREATE INDEX runs_wake_idx ON runs (status, queue, wake_at);

-- Queued claims: candidates in claim order, running counts per queue and per key, starts in a window.
CREATE INDEX runs_queue_pending_idx ON runs (queue, priority DESC, created_at, run_id) WHERE queue IS NOT NULL AND status = 'pending';
CREATE INDEX runs_queue_due_idx ON runs (queue, priority DESC, wake_at, run_id) WHERE queue IS NOT NULL AND status = 'suspended' AND wake_at IS NOT NULL;
CREATE INDEX runs_queue_running_idx ON runs (queue, concurrency_key) WHERE queue IS NOT NULL AND status = 'running';
CREATE INDEX runs_queue_started_idx ON runs (queue, started_at) WHERE queue IS NOT NULL AND started_at IS NOT NULL;

-- Debounce by key: at most one run per (workflow, key) that has not started (never claimed: epoch 0).
ALTER TABLE runs ADD COLUMN debounce_key TEXT;
CREATE UNIQUE INDEX runs_debounce_idx ON runs (workflow, debounce_key) WHERE debounce_key IS NOT NULL AND lease_epoch = 0;
