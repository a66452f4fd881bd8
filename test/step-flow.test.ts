/**
 * Step flow control on SQLite: several worker processes on one database file (see support/step-flow-suite.ts).
 */
import { join } from "node:path";
import { describe } from "vitest";
import { tempDir } from "./support/engines.js";
import { stepFlowSuite } from "./support/step-flow-suite.js";

describe("step flow control on SQLite", () => {
  stepFlowSuite(async () => `sqlite:${join(tempDir(), "cairn.db")}`);
});
