import { runSuiteOnPostgres } from "../../test/support/engines.js";

// The suite of loop.test.ts, on PostgreSQL (each test on a fresh schema).
await runSuiteOnPostgres(() => import("./loop.test.js"));
