-- Cairn store schema, version 9 (postgres): reserved for schedules; no change yet.
SELECT 1;
