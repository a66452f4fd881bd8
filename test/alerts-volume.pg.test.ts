import { runSuiteOnPostgres } from "./support/engines.js";

// The suite of alerts-volume.test.ts, on PostgreSQL (a fresh schema).
await runSuiteOnPostgres(() => import("./alerts-volume.test.js"));
