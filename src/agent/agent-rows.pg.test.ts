import { runSuiteOnPostgres } from "../../test/support/engines.js";

// The suite of agent-rows.test.ts, on PostgreSQL (each test on a fresh schema).
await runSuiteOnPostgres(() => import("./agent-rows.test.js"));
