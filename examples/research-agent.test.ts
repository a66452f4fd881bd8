import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createEngine, silentLogger, type Engine, type Worker } from "cairn";
import { workflows } from "./index.js";
import { countLedger, LEDGER_ENV } from "./ledger.js";
import { research, type ResearchResult } from "./research-agent.js";
import { waitForEventWait } from "./test-helpers.js";

/** The keys one research run executes before its first review: plan, four searches, draft. */
function keysBeforeReview(runId: string): string[] {
  return ["plan#0", "search#0", "search#1", "search#2", "search#3", "draft#0"].map((op) => `${runId}:${op}`);
}

describe.each([
  { store: "memory", url: (_dir: string) => "memory:" },
  { store: "sqlite", url: (dir: string) => `sqlite:${join(dir, "research.db")}` },
])("research agent on the $store store", ({ store, url }) => {
  let dir: string;
  let ledger: string;
  let engine: Engine;
  let worker: Worker;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), "cairn-research-"));
    ledger = join(dir, "ledger.txt");
    process.env[LEDGER_ENV] = ledger;
    engine = await createEngine({ store: url(dir), workflows, logger: silentLogger });
    worker = engine.startWorker({ pollInterval: 10 });
  });

  afterEach(async () => {
    await engine.close();
    delete process.env[LEDGER_ENV];
    rmSync(dir, { recursive: true, force: true });
  });

  it("plans, searches in parallel, waits for review, and writes the report once approved", async () => {
    const run = await engine.start(research, { topic: "solid-state batteries" }, { runId: `${store}-approved` });

    const waiting = await waitForEventWait(engine, run.runId, "review#0");
    expect(waiting.leaseOwner).toBeNull(); // suspended: no worker holds it
    expect(countLedger(ledger)).toEqual(new Map(keysBeforeReview(run.runId).map((key) => [key, 1])));

    await engine.sendEvent(run.runId, "review", { approved: true }, { eventId: "review-1" });
    const result: ResearchResult = await run.result({ timeoutMs: 10_000 });

    expect(result).toMatchObject({ topic: "solid-state batteries", status: "approved", revisions: 0, sources: expect.any(Number) });
    expect(result.questions).toHaveLength(4);
    expect(result.report).toContain("Report: solid-state batteries");
    expect(countLedger(ledger)).toEqual(new Map([...keysBeforeReview(run.runId), `${run.runId}:report#0`].map((key) => [key, 1])));

    const opKeys = (await engine.journal(run.runId)).filter((e) => e.kind === "step.completed").map((e) => e.opKey);
    expect(opKeys.sort()).toEqual(["draft#0", "plan#0", "report#0", "search#0", "search#1", "search#2", "search#3"]);
  });

  it("revises on a rejected review, waits for a second review, then finishes", async () => {
    const run = await engine.start(research, { topic: "tidal power" }, { runId: `${store}-revised` });

    await waitForEventWait(engine, run.runId, "review#0");
    await engine.sendEvent(run.runId, "review", { approved: false, notes: "cite costs per MWh" }, { eventId: "review-1" });
    await waitForEventWait(engine, run.runId, "review#1");
    await engine.sendEvent(run.runId, "review", { approved: true }, { eventId: "review-2" });

    const result: ResearchResult = await run.result({ timeoutMs: 10_000 });
    expect(result).toMatchObject({ status: "approved", revisions: 1 });
    expect(result.draft).toContain("cite costs per MWh");
    expect(result.report).toContain("revision 1");

    const expected = [...keysBeforeReview(run.runId), `${run.runId}:revise#0`, `${run.runId}:report#0`];
    expect(countLedger(ledger)).toEqual(new Map(expected.map((key) => [key, 1])));
  });

  it("stops revising after maxRevisions and reports the draft as rejected", async () => {
    const run = await engine.start(research, { topic: "cold fusion", maxRevisions: 1 }, { runId: `${store}-rejected` });

    await waitForEventWait(engine, run.runId, "review#0");
    await engine.sendEvent(run.runId, "review", { approved: false, notes: "weak sources" }, { eventId: "r1" });
    await waitForEventWait(engine, run.runId, "review#1");
    await engine.sendEvent(run.runId, "review", { approved: false, notes: "still weak" }, { eventId: "r2" });

    const result: ResearchResult = await run.result({ timeoutMs: 10_000 });
    expect(result).toMatchObject({ status: "rejected", revisions: 1, report: null });
    expect(countLedger(ledger).get(`${run.runId}:report#0`)).toBeUndefined();
  });

  it("takes a review sent before the run waits for it, exactly once", async () => {
    await worker.stop({ drain: true });
    const run = await engine.start(research, { topic: "perovskites" }, { runId: `${store}-early-review` });
    await engine.sendEvent(run.runId, "review", { approved: true }, { eventId: "early" });
    const again = await engine.sendEvent(run.runId, "review", { approved: false }, { eventId: "early" });
    expect(again.duplicate).toBe(true);

    worker = engine.startWorker({ pollInterval: 10 });
    const result: ResearchResult = await run.result({ timeoutMs: 10_000 });
    expect(result).toMatchObject({ status: "approved", revisions: 0 });
  });

  it.runIf(store === "sqlite")("resumes in a new engine on the same file without re-running finished steps", async () => {
    const run = await engine.start(research, { topic: "grid storage" }, { runId: "sqlite-reopened" });
    await waitForEventWait(engine, run.runId, "review#0");
    await engine.close();

    engine = await createEngine({ store: url(dir), workflows, logger: silentLogger });
    worker = engine.startWorker({ pollInterval: 10 });
    await engine.sendEvent(run.runId, "review", { approved: true }, { eventId: "review-1" });
    const result: ResearchResult = await engine.result(run.runId, { timeoutMs: 10_000 });

    expect(result.status).toBe("approved");
    const expected = [...keysBeforeReview(run.runId), `${run.runId}:report#0`];
    expect(countLedger(ledger)).toEqual(new Map(expected.map((key) => [key, 1])));
  });
});
