import { deploysSpec, postgresUrl } from "./support/deploys-spec.js";

// Safe deploys (versions, drain, dead-letter, replay) on PostgreSQL (CAIRN_TEST_PG_URL), a fresh schema per test.
deploysSpec("postgres", postgresUrl);
