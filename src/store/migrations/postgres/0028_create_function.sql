-- Cairn store schema, version 28 (postgres): a run's creation in one round trip.
-- cairn_create_plain inserts runs (skipping ids that exist, as INSERT_RUNS does) with their first
-- journal entries, as one statement: runs without a queue, tags, deadline, delayed start or blobs,
-- created pending or already claimed by a worker. Their times are the statement's: created and
-- updated at the commit's time, a lease (r_lease_ms not NULL) expiring r_lease_ms after it, every
-- entry stamped with it. Entries are written only for the runs this call inserted. The wake-up
-- NOTIFY (p_wake_channel; NULL: none) goes out when it inserted a run, the journal NOTIFY (channel
-- and payload chosen by the caller; NULL: none) with its commit. Returns the ids it inserted, each
-- with the time it used.
CREATE FUNCTION cairn_create_plain(
  r_ids TEXT[], r_workflows TEXT[], r_versions TEXT[], r_statuses TEXT[], r_inputs TEXT[],
  r_parent_ids TEXT[], r_parent_keys TEXT[], r_owners TEXT[], r_lease_ms BIGINT[], r_epochs BIGINT[], r_last_seqs BIGINT[],
  p_now BIGINT,
  e_run_ids TEXT[], e_seqs BIGINT[], e_kinds TEXT[], e_payloads TEXT[], e_epochs BIGINT[],
  p_wake_channel TEXT, p_channel TEXT, p_notice TEXT
) RETURNS TABLE (created_id TEXT, created_at_ms BIGINT)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  t BIGINT := COALESCE(p_now, (extract(epoch from clock_timestamp()) * 1000)::bigint);
  inserted TEXT[];
BEGIN
  WITH ins AS (
    INSERT INTO runs (run_id, workflow, version, status, input, output, error, parent_run_id, parent_op_key, wake_at, waiting_for,
        lease_owner, lease_expires_at, lease_epoch, last_seq, wake_pending, created_at, updated_at, finished_at)
      SELECT w.id, w.workflow, w.version, w.status, w.input, NULL, NULL, w.parent_id, w.parent_key, NULL, NULL,
          w.owner, CASE WHEN w.lease_ms IS NULL THEN NULL ELSE t + w.lease_ms END, w.epoch, w.last_seq, FALSE, t, t, NULL
        FROM unnest(r_ids, r_workflows, r_versions, r_statuses, r_inputs, r_parent_ids, r_parent_keys, r_owners, r_lease_ms, r_epochs, r_last_seqs)
          WITH ORDINALITY AS w(id, workflow, version, status, input, parent_id, parent_key, owner, lease_ms, epoch, last_seq, idx)
        ORDER BY w.idx
      ON CONFLICT (run_id) DO NOTHING
      RETURNING run_id
  )
  SELECT array_agg(run_id) INTO inserted FROM ins;
  IF inserted IS NULL THEN
    RETURN;
  END IF;
  INSERT INTO journal (run_id, seq, kind, op_key, payload, epoch, at)
    SELECT e.run_id, e.seq, e.kind, NULL, e.payload, e.epoch, t
    FROM unnest(e_run_ids, e_seqs, e_kinds, e_payloads, e_epochs) AS e(run_id, seq, kind, payload, epoch)
    WHERE e.run_id = ANY (inserted);
  IF p_wake_channel IS NOT NULL THEN
    PERFORM pg_notify(p_wake_channel, '');
  END IF;
  IF p_notice IS NOT NULL THEN
    PERFORM pg_notify(p_channel, p_notice);
  END IF;
  RETURN QUERY SELECT i, t FROM unnest(inserted) AS i;
END;
$$;
