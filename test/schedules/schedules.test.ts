import { join } from "node:path";
import { scheduleEngineSpec } from "./engine-spec.js";
import { tempDir } from "../support/engines.js";

scheduleEngineSpec("memory", async () => "memory:");
scheduleEngineSpec("SQLite", async () => `sqlite:${join(tempDir(), "cairn.db")}`);
