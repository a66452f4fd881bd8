import { runSuiteOnPostgres } from "../../test/support/engines.js";

// The suite of events.test.ts, on PostgreSQL (each test on a fresh schema).
await runSuiteOnPostgres(() => import("./events.test.js"));
