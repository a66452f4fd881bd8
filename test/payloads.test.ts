/** Offloaded and encrypted payloads on SQLite: see test/support/payloads-suite.ts. */
import { payloadsSuite } from "./support/payloads-suite.js";
import { rawSqlite } from "./support/raw-databases.js";

payloadsSuite("sqlite", rawSqlite);
