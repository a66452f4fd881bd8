-- Cairn store schema, version 15 (PostgreSQL): a human request is `closed` (with the run's final
-- status as closed_reason) when its run finishes before anyone answers.
ALTER TABLE human_requests DROP CONSTRAINT human_requests_status_check;
ALTER TABLE human_requests ADD CONSTRAINT human_requests_status_check CHECK (status IN ('pending', 'answered', 'closed'));
ALTER TABLE human_requests ADD COLUMN closed_reason TEXT;

-- Requests of runs that already finished were left pending: close them.
UPDATE human_requests h
   SET status = 'closed', closed_reason = r.status, answered_at = COALESCE(r.finished_at, r.updated_at)
  FROM runs r
 WHERE r.run_id = h.run_id AND h.status = 'pending'
   AND r.status IN ('completed', 'failed', 'cancelled', 'compensated', 'compensation_failed', 'dead');
