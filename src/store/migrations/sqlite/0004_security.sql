-- Cairn store schema, version 4 (SQLite): API tokens and the audit log.

-- API tokens: only the SHA-256 of each secret is kept; the secret is shown once, at creation.
CREATE TABLE tokens (
  id          TEXT    NOT NULL PRIMARY KEY,
  name        TEXT    NOT NULL,
  hash        TEXT    NOT NULL,   -- hex SHA-256 of the secret part of the token
  scopes      TEXT    NOT NULL,   -- JSON array of "read" | "write" | "admin"
  namespace   TEXT,               -- runs whose id starts with "<namespace>/", or NULL for all
  created_at  INTEGER NOT NULL,
  revoked_at  INTEGER
);

-- Every privileged action: who did what to what, and when. Append-only.
CREATE TABLE audit_log (
  id      INTEGER PRIMARY KEY,
  at      INTEGER NOT NULL,
  actor   TEXT    NOT NULL,
  action  TEXT    NOT NULL,
  target  TEXT,
  detail  TEXT               -- JSON object, or NULL
);
CREATE INDEX audit_log_target_idx ON audit_log (target, id);
