import { describe, it } from "vitest";
import { outboxEngineSuite } from "./support/outbox-suite.js";
import { freshPgUrl, pgReachable } from "./support/pg-schema.js";

// Needs PostgreSQL (CAIRN_TEST_PG_URL); under CI=true an unreachable server fails the suite.
if (await pgReachable()) outboxEngineSuite("postgres", () => freshPgUrl());
else describe.skip("the outbox on postgres", () => it("needs PostgreSQL", () => undefined));
