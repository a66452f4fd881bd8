/** Live runs (requests, continue as new, deadlines) across real worker SIGKILLs on SQLite; see test/support/live-crash-suite.ts. */
import { describe } from "vitest";
import { liveCrashSuite } from "./support/live-crash-suite.js";

describe("live runs across worker crashes (sqlite)", () => liveCrashSuite("sqlite"));
