import { runSuiteOnPostgres } from "../../../test/support/engines.js";

// The suite of evaluator.test.ts, on PostgreSQL (each test on a fresh schema): racing evaluators there use separate connections.
await runSuiteOnPostgres(() => import("./evaluator.test.js"));
