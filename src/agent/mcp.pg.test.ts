import { runSuiteOnPostgres } from "../../test/support/engines.js";

// The suite of mcp.test.ts, on PostgreSQL (each test on a fresh schema).
await runSuiteOnPostgres(() => import("./mcp.test.js"));
