-- Cairn store schema, version 7 (sqlite): reserved for outbox; no change yet.
SELECT 1;
