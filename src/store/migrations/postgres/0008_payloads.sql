-- Cairn store schema, version 8 (postgres): reserved for payloads; no change yet.
SELECT 1;
