/** Event triggers under a crash, on SQLite (see support/events-crash-suite.ts). */
import { join } from "node:path";
import { describe } from "vitest";
import { tempDir } from "./support/engines.js";
import { eventsCrashSuite } from "./support/events-crash-suite.js";

describe("event triggers under a crash on SQLite", () => {
  eventsCrashSuite(async () => `sqlite:${join(tempDir(), "cairn.db")}`);
});
