import { runSuiteOnPostgres } from "../../test/support/engines.js";

// The suite of compaction.test.ts, on PostgreSQL (each test on a fresh schema).
await runSuiteOnPostgres(() => import("./compaction.test.js"));
