/** Live deltas of a `cairn worker` process in the streams of a `cairn serve` process, on SQLite; see test/support/remote-deltas-suite.ts. */
import { describe } from "vitest";
import { remoteDeltasSuite } from "./support/remote-deltas-suite.js";

describe("live deltas across processes (sqlite)", () => remoteDeltasSuite("sqlite"));
