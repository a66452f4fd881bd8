import { runSuiteOnPostgres } from "../../test/support/engines.js";

// The suite of operations.test.ts, on PostgreSQL (each test on a fresh schema).
await runSuiteOnPostgres(() => import("./operations.test.js"));
