-- Cairn store schema, version 12 (postgres): reserved for retention; no change yet.
SELECT 1;
