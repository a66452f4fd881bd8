/** Live runs (requests, continue as new, deadlines) across real worker SIGKILLs on PostgreSQL; see test/support/live-crash-suite.ts. */
import { describe } from "vitest";
import { postgresReachable } from "./support/store-urls.js";
import { liveCrashSuite } from "./support/live-crash-suite.js";

const pgUp = await postgresReachable();

describe.skipIf(!pgUp)("live runs across worker crashes (postgres)", () => liveCrashSuite("postgres"));
