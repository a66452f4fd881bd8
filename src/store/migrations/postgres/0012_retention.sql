-- Cairn store schema, version 12 (PostgreSQL): retention. Finished runs by finish time, so `cairn prune` and the
-- automatic retention policy find the runs past their cutoff without scanning live ones. Rows with no
-- finish time (live runs) are not in the index, so step commits of live runs never touch it.
CREATE INDEX runs_finished_idx ON runs (finished_at, run_id) WHERE finished_at IS NOT NULL;
