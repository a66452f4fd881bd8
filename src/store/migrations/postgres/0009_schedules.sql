-- Cairn store schema, version 9 (PostgreSQL): schedules (cron-driven runs).

-- One row per schedule: its definition, the scheduler's progress, and the lease of the one scheduler
-- firing its ticks. Ticks start runs with id "schedule:<name>:<ISO tick>", so a tick re-fired after a
-- crash finds its run instead of starting another.
CREATE TABLE schedules (
  name              TEXT COLLATE "C" NOT NULL PRIMARY KEY,
  workflow          TEXT    NOT NULL,
  cron              TEXT    NOT NULL,
  timezone          TEXT    NOT NULL,
  input             TEXT    NOT NULL,   -- encoded workflow input
  overlap           TEXT    NOT NULL CHECK (overlap IN ('skip', 'buffer', 'allow')),
  catch_up          TEXT    NOT NULL CHECK (catch_up IN ('none', 'latest', 'all')),
  max_catch_up      INTEGER NOT NULL,
  grace_ms          BIGINT  NOT NULL,
  paused            BOOLEAN NOT NULL DEFAULT FALSE,
  cursor_at         BIGINT  NOT NULL,   -- every tick at or before it was handled
  next_tick_at      BIGINT,
  last_tick_at      BIGINT,
  last_run_id       TEXT,
  buffered_tick_at  BIGINT,
  fired_count       BIGINT  NOT NULL DEFAULT 0,
  skipped_count     BIGINT  NOT NULL DEFAULT 0,
  missed_count      BIGINT  NOT NULL DEFAULT 0,
  owner             TEXT,
  lease_expires_at  BIGINT,
  epoch             BIGINT  NOT NULL DEFAULT 0,
  created_at        BIGINT  NOT NULL,
  updated_at        BIGINT  NOT NULL
);
