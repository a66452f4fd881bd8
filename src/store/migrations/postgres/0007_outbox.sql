-- Cairn store schema, version 7 (postgres): reserved for outbox; no change yet.
SELECT 1;
