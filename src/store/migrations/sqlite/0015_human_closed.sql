-- Cairn store schema, version 15 (SQLite): a human request is `closed` (with the run's final status
-- as closed_reason) when its run finishes before anyone answers; lists page by (created_at,
-- request_id). SQLite cannot alter a CHECK constraint, so the table is rebuilt the documented way
-- (the migrator runs with foreign_keys OFF and checks PRAGMA foreign_key_check before it commits).
CREATE TABLE human_requests_new (
  request_id    TEXT    NOT NULL PRIMARY KEY,
  run_id        TEXT    NOT NULL REFERENCES runs (run_id),
  op_key        TEXT    NOT NULL,
  question      TEXT    NOT NULL,
  options       TEXT    NOT NULL,     -- JSON array of strings
  status        TEXT    NOT NULL CHECK (status IN ('pending', 'answered', 'closed')),
  answer        TEXT,                 -- encoded HumanAnswer
  timeout_at    INTEGER,
  created_at    INTEGER NOT NULL,
  answered_at   INTEGER,              -- answered or closed
  context       TEXT,
  closed_reason TEXT                  -- with status 'closed': the run's final status
);
INSERT INTO human_requests_new (request_id, run_id, op_key, question, options, status, answer, timeout_at, created_at, answered_at, context)
  SELECT request_id, run_id, op_key, question, options, status, answer, timeout_at, created_at, answered_at, context FROM human_requests;
DROP TABLE human_requests;
ALTER TABLE human_requests_new RENAME TO human_requests;
CREATE INDEX human_requests_status_idx ON human_requests (status, created_at, request_id);
CREATE INDEX human_requests_run_idx    ON human_requests (run_id, created_at, request_id);

-- Requests of runs that already finished were left pending: close them.
UPDATE human_requests
   SET status = 'closed', closed_reason = (SELECT status FROM runs WHERE runs.run_id = human_requests.run_id),
       answered_at = (SELECT COALESCE(finished_at, updated_at) FROM runs WHERE runs.run_id = human_requests.run_id)
 WHERE status = 'pending'
   AND run_id IN (SELECT run_id FROM runs WHERE status IN ('completed', 'failed', 'cancelled', 'compensated', 'compensation_failed', 'dead'));
