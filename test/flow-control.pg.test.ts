/**
 * Flow control on PostgreSQL: several worker processes, each with its own pool, on one schema
 * (see support/flow-suite.ts). Needs CAIRN_TEST_PG_URL (default postgres://postgres@127.0.0.1:5432/test).
 */
import { describe } from "vitest";
import { chaosSchema } from "./chaos/support/pg.js";
import { flowSuite } from "./support/flow-suite.js";

describe("flow control on PostgreSQL", () => {
  flowSuite(async () => (await chaosSchema()).url("cairn_flow"));
});
