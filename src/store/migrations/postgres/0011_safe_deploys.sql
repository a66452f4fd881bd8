-- Cairn store schema, version 11 (postgres): reserved for safe_deploys; no change yet.
SELECT 1;
