-- Cairn store schema, version 14 (postgres): reserved for server; no change yet.
SELECT 1;
