-- Cairn store schema, version 3 (SQLite): loop checkpoints and full-text search. Checkpoints are indexed so a resume finds the newest one
-- without reading the history it supersedes (core/resume.ts).
CREATE INDEX journal_checkpoint_idx ON journal (run_id, seq) WHERE kind IN ('loop.snapshot', 'loop.completed');

-- Full-text index of step results that asked for it (StepOptions.searchText), for Store.searchJournal.
CREATE VIRTUAL TABLE journal_text USING fts5 (body, run_id UNINDEXED, seq UNINDEXED, op_key UNINDEXED, tokenize = 'unicode61');
