import { runSuiteOnPostgres } from "../../test/support/engines.js";

// The suite of replay.test.ts, on PostgreSQL (each test on a fresh schema).
await runSuiteOnPostgres(() => import("./replay.test.js"));
