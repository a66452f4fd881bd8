-- Cairn store schema, version 26 (postgres): compaction of superseded loop entries (engine.compact,
-- retention.compactLoopsAfter). One row per compacted run: how many journal entries were deleted
-- (their seqs stay as gaps), the checkpoint that covers them (a fork cuts at it or later) and the
-- newest checkpoint looked at. A per-run table: pruning a run deletes its row (PER_RUN_TABLES).
CREATE TABLE journal_compactions (
  run_id      TEXT COLLATE "C" NOT NULL PRIMARY KEY REFERENCES runs (run_id),
  entries     BIGINT NOT NULL,
  bytes       BIGINT NOT NULL,
  covered_seq BIGINT NOT NULL,
  checked_seq BIGINT NOT NULL,
  at          BIGINT NOT NULL
);
