-- Cairn store schema, version 27 (postgres): a top-level run's completion in one round trip.
-- cairn_complete_plain appends a write's entries (plain appends, then its run.completed) to a run
-- held under the given lease epoch, completes the run's row as the run.completed projection does
-- (status, output, no wake-up or waits, lease released, finished at the commit's time) and closes
-- its pending human requests, as one statement. A run with a parent (whose wake-up the general path
-- writes) or not running under that epoch with a lease owner raises SQLSTATE CN001 and writes
-- nothing: the caller falls back to the locking write path. The journal NOTIFY (channel and payload
-- chosen by the caller; NULL: none) goes out with its commit.
CREATE FUNCTION cairn_complete_plain(
  p_run_id TEXT, p_epoch BIGINT, p_now BIGINT, p_output TEXT,
  e_kinds TEXT[], e_op_keys TEXT[], e_payloads TEXT[],
  p_channel TEXT, p_notice TEXT
) RETURNS BIGINT
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  t BIGINT := COALESCE(p_now, (extract(epoch from clock_timestamp()) * 1000)::bigint);
  n BIGINT := cardinality(e_kinds);
  b BIGINT;
  e BIGINT;
BEGIN
  UPDATE runs AS r SET last_seq = r.last_seq + n, updated_at = t, status = 'completed', output = p_output,
      wake_at = NULL, waiting_for = NULL, lease_owner = NULL, lease_expires_at = NULL, finished_at = t
    WHERE r.run_id = p_run_id AND r.lease_epoch = p_epoch AND r.status = 'running' AND r.lease_owner IS NOT NULL
      AND r.parent_run_id IS NULL
    RETURNING r.last_seq - n, r.lease_epoch INTO b, e;
  IF b IS NULL THEN
    RAISE EXCEPTION 'cairn: run % is not held under epoch % (or has a parent)', p_run_id, p_epoch USING ERRCODE = 'CN001';
  END IF;
  INSERT INTO journal (run_id, seq, kind, op_key, payload, epoch, at)
    SELECT p_run_id, b + w.idx, w.kind, w.op_key, w.payload, e, t
    FROM unnest(e_kinds, e_op_keys, e_payloads) WITH ORDINALITY AS w(kind, op_key, payload, idx);
  UPDATE human_requests SET status = 'closed', closed_reason = 'completed', answered_at = t
    WHERE run_id = p_run_id AND status = 'pending';
  IF p_notice IS NOT NULL THEN
    PERFORM pg_notify(p_channel, p_notice);
  END IF;
  RETURN b;
END;
$$;
