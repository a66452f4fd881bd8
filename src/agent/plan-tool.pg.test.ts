import { runSuiteOnPostgres } from "../../test/support/engines.js";

// The suite of plan-tool.test.ts, on PostgreSQL (each test on a fresh schema).
await runSuiteOnPostgres(() => import("./plan-tool.test.js"));
