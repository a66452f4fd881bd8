-- Cairn store schema, version 13 (postgres): reserved for sagas_resources; no change yet.
SELECT 1;
