import { runSuiteOnPostgres } from "../../test/support/engines.js";

// The suite of live-runs.test.ts, on PostgreSQL (each test on a fresh schema).
await runSuiteOnPostgres(() => import("./live-runs.test.js"));
