import { runSuiteOnPostgres } from "../../test/support/engines.js";

// The suite of result.test.ts, on PostgreSQL (each test on a fresh schema).
await runSuiteOnPostgres(() => import("./result.test.js"));
