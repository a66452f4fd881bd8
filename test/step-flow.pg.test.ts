/**
 * Step flow control on PostgreSQL: several worker processes, each with its own pool, on one schema
 * (see support/step-flow-suite.ts). Needs CAIRN_TEST_PG_URL (default postgres://postgres@127.0.0.1:5432/test).
 */
import { describe } from "vitest";
import { chaosSchema } from "./chaos/support/pg.js";
import { stepFlowSuite } from "./support/step-flow-suite.js";

describe("step flow control on PostgreSQL", () => {
  stepFlowSuite(async () => (await chaosSchema()).url("cairn_step_flow"));
});
