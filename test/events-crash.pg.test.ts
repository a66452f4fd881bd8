/**
 * Event triggers under a crash, on PostgreSQL (see support/events-crash-suite.ts). Needs
 * CAIRN_TEST_PG_URL (default postgres://postgres@127.0.0.1:5432/test).
 */
import { describe } from "vitest";
import { chaosSchema } from "./chaos/support/pg.js";
import { eventsCrashSuite } from "./support/events-crash-suite.js";

describe("event triggers under a crash on PostgreSQL", () => {
  eventsCrashSuite(async () => (await chaosSchema()).url("cairn_events"));
});
