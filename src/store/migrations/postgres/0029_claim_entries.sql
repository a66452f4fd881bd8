-- Cairn store schema, version 29 (postgres): a run's latest claim found by an index. The dead-letter
-- check of a re-claim reads the attempt that just ended, from the run's newest `run.claimed` entry
-- on; finding that entry scanned the run's whole journal backwards when the attempt was long (a loop
-- that ran 100,000 iterations in one attempt: most of a second). Claims are a small part of any
-- journal, so the partial index stays small. (Built with a plain CREATE INDEX, inside the migration's
-- transaction: writes to the journal wait while it builds.)
CREATE INDEX journal_claims_idx ON journal (run_id, seq) WHERE kind = 'run.claimed';
