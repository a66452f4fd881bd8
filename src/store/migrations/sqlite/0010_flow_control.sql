-- Cairn store schema, version 10 (sqlite): reserved for flow_control; no change yet.
SELECT 1;
