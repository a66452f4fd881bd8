-- Cairn store schema, version 8 (SQLite): content-addressed payloads (docs/operations/payloads.md).
-- A journal entry, run input/output or inbox payload larger than the inline limit is stored here,
-- keyed by the SHA-256 (hex) of its text, and the row keeps `{"$cairn":"blob","sha256":…,"size":…}`.
-- Written in the transaction of the row that references it; identical payloads are stored once.
-- A table rather than files: the blob and its reference commit or roll back together.
CREATE TABLE blobs (
  hash       TEXT    NOT NULL PRIMARY KEY,   -- SHA-256 (hex) of the payload text
  size       INTEGER NOT NULL,               -- UTF-8 bytes of the payload text
  body       TEXT    NOT NULL,               -- the payload, or its encrypted form
  created_at INTEGER NOT NULL,
  used_at    INTEGER NOT NULL                -- last time a write referenced it (garbage collection grace)
);
