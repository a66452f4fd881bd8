/** SIGKILL with offloaded, encrypted payloads on SQLite: see test/support/payloads-crash-suite.ts. */
import { payloadsCrashSuite } from "./support/payloads-crash-suite.js";
import { rawSqlite } from "./support/raw-databases.js";

payloadsCrashSuite("sqlite", rawSqlite);
