import { runSuiteOnPostgres } from "../../test/support/engines.js";

// The suite of replay-property.test.ts, on PostgreSQL (each test on a fresh schema).
await runSuiteOnPostgres(() => import("./replay-property.test.js"));
