-- Cairn store schema (postgres): API tokens may expire (`cairn token create --expires-in 30d`);
-- NULL never expires, as every token made before this migration.
ALTER TABLE tokens ADD COLUMN expires_at BIGINT;
