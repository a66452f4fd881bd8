import { describe, it } from "vitest";
import { humanNotifySuite } from "./support/human-notify-suite.js";
import { freshPgUrl, pgReachable } from "./support/pg-schema.js";

// Needs PostgreSQL (CAIRN_TEST_PG_URL); under CI=true an unreachable server fails the suite.
if (await pgReachable()) humanNotifySuite("postgres", () => freshPgUrl());
else describe.skip("askHuman notify on postgres", () => it("needs PostgreSQL", () => undefined));
