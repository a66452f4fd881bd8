import { deploysSpec, sqliteUrl } from "./support/deploys-spec.js";

// Safe deploys (versions, drain, dead-letter, replay) on SQLite; deploys.pg.test.ts runs the same on PostgreSQL.
deploysSpec("sqlite", sqliteUrl);
