-- Cairn store schema, version 11 (sqlite): reserved for safe_deploys; no change yet.
SELECT 1;
