/** Live deltas of a `cairn worker` process in the streams of a `cairn serve` process, on PostgreSQL; see test/support/remote-deltas-suite.ts. */
import { describe } from "vitest";
import { postgresReachable } from "./support/store-urls.js";
import { remoteDeltasSuite } from "./support/remote-deltas-suite.js";

describe.skipIf(!(await postgresReachable()))("live deltas across processes (postgres)", () => remoteDeltasSuite("postgres"));
