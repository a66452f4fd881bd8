import { runSuiteOnPostgres } from "../../test/support/engines.js";

// The suite of model-flow.test.ts, on PostgreSQL (each test on a fresh schema).
await runSuiteOnPostgres(() => import("./model-flow.test.js"));
