import { runSuiteOnPostgres } from "../../test/support/engines.js";

// The suite of tool-keys.test.ts, on PostgreSQL (each test on a fresh schema).
await runSuiteOnPostgres(() => import("./tool-keys.test.js"));
