import { runSuiteOnPostgres } from "../../test/support/engines.js";

// The suite of observer.test.ts, on PostgreSQL (each test on a fresh schema).
await runSuiteOnPostgres(() => import("./observer.test.js"));
