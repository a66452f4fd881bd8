import { runSuiteOnPostgres } from "../../test/support/engines.js";

// The suite of effects.test.ts, on PostgreSQL (each test on a fresh schema).
await runSuiteOnPostgres(() => import("./effects.test.js"));
