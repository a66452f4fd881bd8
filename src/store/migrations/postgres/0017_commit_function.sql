-- Cairn store schema, version 17 (postgres): a step's commit in one round trip. cairn_append_plain
-- appends entries to running runs held under the given lease epochs and advances their rows, as one
-- statement (its own transaction when sent outside one), all or nothing: when any run is not running
-- under that epoch with a lease owner it raises SQLSTATE CN001 and writes nothing, and the caller
-- falls back to the locking write path, which tells each write why it was refused. The journal
-- NOTIFY (channel and payload chosen by the caller; NULL: none) goes out with its commit.
CREATE FUNCTION cairn_append_plain(
  p_run_ids TEXT[], p_epochs BIGINT[], p_counts BIGINT[], p_now BIGINT,
  e_run_ids TEXT[], e_idx BIGINT[], e_kinds TEXT[], e_op_keys TEXT[], e_payloads TEXT[],
  p_channel TEXT, p_notice TEXT
) RETURNS TABLE (run_id TEXT, base BIGINT)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  t BIGINT := COALESCE(p_now, (extract(epoch from clock_timestamp()) * 1000)::bigint);
  applied BIGINT;
BEGIN
  RETURN QUERY
  WITH u AS (
    UPDATE runs AS r SET last_seq = r.last_seq + w.n, updated_at = t
    FROM unnest(p_run_ids, p_epochs, p_counts) AS w(run_id, epoch, n)
    WHERE r.run_id = w.run_id AND r.lease_epoch = w.epoch AND r.status = 'running' AND r.lease_owner IS NOT NULL
    RETURNING r.run_id, r.last_seq - w.n AS base, r.lease_epoch AS epoch
  ), e AS (
    INSERT INTO journal (run_id, seq, kind, op_key, payload, epoch, at)
    SELECT e.run_id, u.base + e.idx, e.kind, e.op_key, e.payload, u.epoch, t
    FROM unnest(e_run_ids, e_idx, e_kinds, e_op_keys, e_payloads) AS e(run_id, idx, kind, op_key, payload)
    JOIN u ON u.run_id = e.run_id
  )
  SELECT u.run_id, u.base FROM u;
  GET DIAGNOSTICS applied = ROW_COUNT;
  IF applied <> cardinality(p_run_ids) THEN
    RAISE EXCEPTION 'cairn: % of % runs are not held under the given epoch', cardinality(p_run_ids) - applied, cardinality(p_run_ids)
      USING ERRCODE = 'CN001';
  END IF;
  IF p_notice IS NOT NULL THEN
    PERFORM pg_notify(p_channel, p_notice);
  END IF;
END;
$$;
