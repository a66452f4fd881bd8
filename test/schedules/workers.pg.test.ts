import { describe, it } from "vitest";
import { pgReachable, pgSchemaUrl } from "./pg.js";
import { scheduleWorkersSpec } from "./workers-spec.js";

// The database clock (the default): workers' schedulers fire by PostgreSQL's time.
if (await pgReachable()) scheduleWorkersSpec("PostgreSQL", async () => pgSchemaUrl());
else describe.skip("schedules with worker processes on PostgreSQL (unreachable)", () => it("skipped", () => undefined));
