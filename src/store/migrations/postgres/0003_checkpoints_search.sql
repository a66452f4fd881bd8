-- Cairn store schema, version 3 (PostgreSQL): loop checkpoints and full-text search. Checkpoints are indexed so a resume finds the newest one
-- without reading the history it supersedes (core/resume.ts).
CREATE INDEX journal_checkpoint_idx ON journal (run_id, seq) WHERE kind IN ('loop.snapshot', 'loop.completed');

-- Full-text index of step results that asked for it (StepOptions.searchText), for Store.searchJournal.
CREATE TABLE journal_text (
  run_id TEXT COLLATE "C" NOT NULL,
  seq    BIGINT NOT NULL,
  op_key TEXT NOT NULL,
  body   TEXT NOT NULL,
  tsv    tsvector GENERATED ALWAYS AS (to_tsvector('simple', body)) STORED,
  PRIMARY KEY (run_id, seq)
);
CREATE INDEX journal_text_tsv_idx ON journal_text USING gin (tsv);
