import { runSuiteOnPostgres } from "../../test/support/engines.js";

// The suite of ask-human.test.ts, on PostgreSQL (each test on a fresh schema).
await runSuiteOnPostgres(() => import("./ask-human.test.js"));
