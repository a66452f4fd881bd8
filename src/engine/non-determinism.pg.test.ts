import { runSuiteOnPostgres } from "../../test/support/engines.js";

// The suite of non-determinism.test.ts, on PostgreSQL (each test on a fresh schema).
await runSuiteOnPostgres(() => import("./non-determinism.test.js"));
