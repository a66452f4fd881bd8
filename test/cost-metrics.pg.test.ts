import { runSuiteOnPostgres } from "./support/engines.js";

// The suite of cost-metrics.test.ts, on PostgreSQL (each test on a fresh schema).
await runSuiteOnPostgres(() => import("./cost-metrics.test.js"));
