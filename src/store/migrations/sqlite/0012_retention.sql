-- Cairn store schema, version 12 (sqlite): reserved for retention; no change yet.
SELECT 1;
