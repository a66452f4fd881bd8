-- Cairn store schema, version 18 (postgres): the latest value a run published under each name
-- (`ctx.publish`, kind 'published') and the replies of its request handlers (`ctx.handle`, kind
-- 'reply', name = request id). Each row is replaced by the commit of the entry that writes it, so a
-- read is one primary-key lookup however often the run published.
CREATE TABLE run_values (
  run_id TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('published', 'reply')),
  name TEXT NOT NULL,
  value TEXT NOT NULL,
  seq BIGINT NOT NULL,
  at BIGINT NOT NULL,
  PRIMARY KEY (run_id, kind, name)
);
