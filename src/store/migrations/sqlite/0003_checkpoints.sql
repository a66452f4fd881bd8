-- Cairn store schema, version 3 (SQLite): loop checkpoints, so a resume finds the newest one
-- without reading the history it supersedes (core/resume.ts).
CREATE INDEX journal_checkpoint_idx ON journal (run_id, seq) WHERE kind IN ('loop.snapshot', 'loop.completed');
