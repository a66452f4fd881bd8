import { runSuiteOnPostgres } from "../../test/support/engines.js";

// The suite of agent-rows-compat.test.ts, on PostgreSQL (each test on a fresh schema).
await runSuiteOnPostgres(() => import("./agent-rows-compat.test.js"));
