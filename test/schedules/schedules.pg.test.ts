import { describe, it } from "vitest";
import { scheduleEngineSpec } from "./engine-spec.js";
import { pgReachable, pgSchemaUrl } from "./pg.js";

// The caller's clock, so the tests' manual clock drives the scheduler, leases and timers.
if (await pgReachable()) scheduleEngineSpec("PostgreSQL", async () => pgSchemaUrl({ clock: "caller" }));
else describe.skip("schedules on PostgreSQL (unreachable)", () => it("skipped", () => undefined));
