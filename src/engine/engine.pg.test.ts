import { runSuiteOnPostgres } from "../../test/support/engines.js";

// The suite of engine.test.ts, on PostgreSQL (each test on a fresh schema).
await runSuiteOnPostgres(() => import("./engine.test.js"));
