-- Cairn store schema, version 15 (postgres): processes that listen for journal notices (servers with
-- open run streams) advertise themselves here, renewing expires_at while they listen; writers send a
-- journal NOTIFY with their commits only while some row is current, so no one pays for it otherwise.
CREATE TABLE journal_listeners (
  listener_id TEXT PRIMARY KEY,
  expires_at BIGINT NOT NULL
);
