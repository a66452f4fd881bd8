import { runSuiteOnPostgres } from "../../test/support/engines.js";

// The suite of compaction-cuts.test.ts, on PostgreSQL (each test on a fresh schema).
await runSuiteOnPostgres(() => import("./compaction-cuts.test.js"));
