import { join } from "node:path";
import { tempDir } from "../support/engines.js";
import { scheduleWorkersSpec } from "./workers-spec.js";

scheduleWorkersSpec("one SQLite file", async () => `sqlite:${join(tempDir(), "cairn.db")}`);
