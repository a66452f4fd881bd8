-- Cairn store schema, version 10 (postgres): reserved for flow_control; no change yet.
SELECT 1;
