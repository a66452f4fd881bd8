/**
 * Event triggers under a crash: a publisher process is SIGKILLed mid-stream, every event is published
 * again, and workers in other processes run what was started. Each event starts exactly one run per
 * subscribed workflow and each run's step effect is in the ledger (outside every process) once.
 * Run by test/events-crash.test.ts (SQLite) and test/events-crash.pg.test.ts (PostgreSQL).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { expect, it } from "vitest";
import { createEngine } from "../../src/engine/create-engine.js";
import { silentLogger } from "../../src/engine/logger.js";
import { waitFor } from "../../src/testing/wait-for.js";
import { onCleanup, tempDir } from "./engines.js";
import { spawnWorker } from "./processes.js";
// @ts-expect-error plain JS fixture
import { workflows } from "../fixtures/event-workflows.mjs";

const PUBLISHER = resolve("test/fixtures/event-publisher.mjs");
const EVENTS = 60;

/** Registers the test; `url()` gives a fresh store URL shared by every process of it. */
export function eventsCrashSuite(url: () => Promise<string>): void {
  it("a publisher SIGKILLed mid-stream, then every event published again: one run per workflow per event, each effect once", async () => {
    const store = await url();
    const ledger = join(tempDir(), "ledger.txt");
    writeFileSync(ledger, "");
    const env = { CAIRN_TEST_STORE: store, CAIRN_TEST_LEDGER: ledger, CAIRN_TEST_EVENTS: String(EVENTS) };
    const publisher = spawnWorker(env, PUBLISHER);
    await publisher.ready;
    const engine = await createEngine({ store, workflows, logger: silentLogger });
    onCleanup(() => engine.close());
    // Kill it while it is publishing (a few runs in, before the last).
    await waitFor(async () => (await engine.listRuns({ limit: 1000 })).runs.length >= 6, { timeoutMs: 20_000, what: "some runs started" });
    publisher.child.kill("SIGKILL");
    await publisher.exited;
    expect(publisher.output()).not.toContain("published all");
    const worker = spawnWorker({ ...env, CAIRN_TEST_WORKFLOWS: resolve("test/fixtures/event-workflows.mjs") }, resolve("test/fixtures/flow-worker.mjs"));
    await worker.ready;
    let created = 0;
    for (let i = 0; i < EVENTS; i++) {
      const result = await engine.publishEvent("order.created", { eventId: `e${i}` }, { eventId: `e${i}` });
      expect(result.runs.map((r) => r.runId)).toEqual([`ship:e${i}`, `bill:e${i}`]);
      created += result.runs.filter((r) => r.created).length;
    }
    // Some runs existed from before the kill; never one run of a workflow without its sibling.
    expect(created).toBeLessThan(2 * EVENTS);
    expect(created % 2).toBe(0);
    await waitFor(async () => (await engine.listRuns({ status: "completed", limit: 1000 })).runs.length === 2 * EVENTS, {
      timeoutMs: 60_000,
      what: "every run to complete",
    });
    const lines = readFileSync(ledger, "utf8").split("\n").filter(Boolean).sort();
    const expected = Array.from({ length: EVENTS }, (_, i) => [`bill e${i}`, `ship e${i}`])
      .flat()
      .sort();
    expect(lines).toEqual(expected);
    expect((await engine.listRuns({ limit: 1000 })).runs).toHaveLength(2 * EVENTS);
  });
}
