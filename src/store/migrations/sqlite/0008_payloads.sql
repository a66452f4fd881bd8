-- Cairn store schema, version 8 (sqlite): reserved for payloads; no change yet.
SELECT 1;
