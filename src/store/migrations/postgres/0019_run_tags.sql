-- Cairn store schema, version 17 (postgres): run tags (`engine.start(…, { tags })`), one row per tag,
-- written with the run. The (key, value, run_id) index serves `listRuns({ tags })`.
CREATE TABLE run_tags (
  run_id TEXT NOT NULL,
  key TEXT NOT NULL,
  value TEXT NOT NULL,
  PRIMARY KEY (run_id, key)
);
CREATE INDEX run_tags_key_value_idx ON run_tags (key, value, run_id);
