import { runSuiteOnPostgres } from "../../test/support/engines.js";

// The suite of thread.test.ts, on PostgreSQL (each test on a fresh schema).
await runSuiteOnPostgres(() => import("./thread.test.js"));
