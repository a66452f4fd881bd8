import { runSuiteOnPostgres } from "../../test/support/engines.js";

// The suite of spend.test.ts, on PostgreSQL (each test on a fresh schema).
await runSuiteOnPostgres(() => import("./spend.test.js"));
