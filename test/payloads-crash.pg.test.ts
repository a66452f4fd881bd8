/**
 * SIGKILL with offloaded, encrypted payloads on PostgreSQL: see test/support/payloads-crash-suite.ts.
 * Needs CAIRN_TEST_PG_URL (default postgres://postgres@127.0.0.1:5432/test); under CI=true it must run.
 */
import { describe, it } from "vitest";
import { payloadsCrashSuite } from "./support/payloads-crash-suite.js";
import { rawPostgres } from "./support/raw-databases.js";
import { postgresReachable } from "./support/store-urls.js";

if (await postgresReachable()) payloadsCrashSuite("postgres", rawPostgres);
else describe.skip("postgres payload crash tests (no server at CAIRN_TEST_PG_URL)", () => it("skipped", () => undefined));
