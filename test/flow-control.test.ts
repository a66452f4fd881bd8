/**
 * Flow control on SQLite: several worker processes on one database file (see support/flow-suite.ts).
 */
import { join } from "node:path";
import { describe } from "vitest";
import { tempDir } from "./support/engines.js";
import { flowSuite } from "./support/flow-suite.js";

describe("flow control on SQLite", () => {
  flowSuite(async () => `sqlite:${join(tempDir(), "cairn.db")}`);
});
