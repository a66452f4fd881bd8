import { runSuiteOnPostgres } from "../../test/support/engines.js";

// The suite of fork.test.ts, on PostgreSQL (each test on a fresh schema).
await runSuiteOnPostgres(() => import("./fork.test.js"));
