import { runSuiteOnPostgres } from "../../test/support/engines.js";

// The suite of step-flow.test.ts, on PostgreSQL (each test on a fresh schema).
await runSuiteOnPostgres(() => import("./step-flow.test.js"));
