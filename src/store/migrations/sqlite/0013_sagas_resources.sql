-- Cairn store schema, version 13 (sqlite): reserved for sagas_resources; no change yet.
SELECT 1;
