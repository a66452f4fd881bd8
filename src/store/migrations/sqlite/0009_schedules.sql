-- Cairn store schema, version 9 (sqlite): reserved for schedules; no change yet.
SELECT 1;
