-- Cairn store schema, version 14 (sqlite): reserved for server; no change yet.
SELECT 1;
