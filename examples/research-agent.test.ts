import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createEngine, silentLogger, type Engine } from "cairn";
import { ManualClock } from "cairn/testing";
import { workflows } from "./index.js";
import { countLedger, LEDGER_ENV } from "./ledger.js";
import { research, type ResearchResult } from "./research-agent.js";
import { answerWhenAsked, waitForHuman } from "./test-helpers.js";

// The examples pick a real model when a key is set; the tests run on the scripted one.
delete process.env.ANTHROPIC_API_KEY;
delete process.env.OPENAI_API_KEY;
delete process.env.CAIRN_MODEL;

/** The idempotency keys of the four searches of the first agent run of `runId`. */
function searchKeys(runId: string): string[] {
  return [0, 1, 2, 3].map((i) => `${runId}/researcher#0:tool:0:search_${i}`);
}

describe.each([
  { store: "memory", url: (_dir: string) => "memory:" },
  { store: "sqlite", url: (dir: string) => `sqlite:${join(dir, "research.db")}` },
])("research agent on the $store store", ({ store, url }) => {
  let dir: string;
  let ledger: string;
  let engine: Engine;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), "cairn-research-"));
    ledger = join(dir, "ledger.txt");
    process.env[LEDGER_ENV] = ledger;
    engine = await createEngine({ store: url(dir), workflows, logger: silentLogger });
    engine.startWorker({ pollInterval: 10 });
  });

  afterEach(async () => {
    await engine.close();
    delete process.env[LEDGER_ENV];
    rmSync(dir, { recursive: true, force: true });
  });

  it("plans, searches in parallel, waits for a review, and writes the report once approved", async () => {
    const run = await engine.start(research, { topic: "solid-state batteries" }, { runId: `${store}-approved` });

    const waiting = await waitForHuman(engine, run.runId, "review#0");
    expect(waiting.leaseOwner).toBeNull(); // suspended: no worker holds it
    expect(countLedger(ledger)).toEqual(new Map(searchKeys(run.runId).map((key) => [key, 1])));
    const [request] = await engine.listHumanRequests({ status: "pending", runId: run.runId });
    expect(request).toMatchObject({ requestId: `${run.runId}:review#0`, options: ["approve", "revise"] });
    // The deadline is taken when the question is asked; the row is stamped when it commits, a moment later.
    expect(request!.timeoutAt! - request!.createdAt).toBeGreaterThan(72 * 3600_000 - 1000);
    expect(request!.timeoutAt! - request!.createdAt).toBeLessThanOrEqual(72 * 3600_000);

    // The four searches were asked in one turn and ran concurrently: every intent before any outcome.
    const agentJournal = await engine.journal(`${run.runId}/researcher#0`);
    const searches = agentJournal.filter((e) => e.opKey?.includes("/tool-search_"));
    const lastStart = Math.max(...searches.filter((e) => e.kind === "step.started").map((e) => e.seq));
    const firstEnd = Math.min(...searches.filter((e) => e.kind === "step.completed").map((e) => e.seq));
    expect(searches.filter((e) => e.kind === "step.completed")).toHaveLength(4);
    expect(lastStart).toBeLessThan(firstEnd);

    await engine.respondToHuman(`${run.runId}:review#0`, { action: "answer", option: "approve", by: "ada" });
    const result: ResearchResult = await run.result({ timeoutMs: 10_000 });

    expect(result).toMatchObject({ topic: "solid-state batteries", status: "approved", revisions: 0, reviewedBy: "ada" });
    expect(result.questions).toHaveLength(4);
    expect(result.sources).toBeGreaterThanOrEqual(8);
    expect(result.draft).toMatch(/^Draft on solid-state batteries: 4 searches reviewed/);
    expect(result.report).toContain("Report: solid-state batteries");
    expect(result.report).toContain(result.draft);
    // Plan+search, draft, then the report: three model calls, four tool calls, each exactly once.
    expect(result.usage).toMatchObject({ modelCalls: 3, toolCalls: 4 });
    expect(countLedger(ledger)).toEqual(new Map(searchKeys(run.runId).map((key) => [key, 1])));
    const parent = (await engine.journal(run.runId)).filter((e) => e.kind === "child.completed" || e.kind === "human.answered").map((e) => e.opKey);
    expect(parent).toEqual(["researcher#0", "review#0", "researcher#1"]);
  });

  it("revises on the reviewer's notes, asks again, then finishes", async () => {
    const run = await engine.start(research, { topic: "tidal power" }, { runId: `${store}-revised` });

    await answerWhenAsked(engine, run.runId, "review#0", "revise", { message: "cite costs per MWh" });
    await answerWhenAsked(engine, run.runId, "review#1", "approve");

    const result: ResearchResult = await run.result({ timeoutMs: 10_000 });
    expect(result).toMatchObject({ status: "approved", revisions: 1 });
    expect(result.draft).toContain("cite costs per MWh");
    expect(result.report).toContain("revision 1");
    expect(result.usage.modelCalls).toBe(4);
    // The revision and the report continued the conversation: no search ran again.
    expect(countLedger(ledger)).toEqual(new Map(searchKeys(run.runId).map((key) => [key, 1])));
  });

  it("stops revising after maxRevisions and reports the draft as rejected", async () => {
    const run = await engine.start(research, { topic: "cold fusion", maxRevisions: 1 }, { runId: `${store}-rejected` });

    await answerWhenAsked(engine, run.runId, "review#0", "revise", { message: "weak sources" });
    await answerWhenAsked(engine, run.runId, "review#1", "revise", { message: "still weak" });

    const result: ResearchResult = await run.result({ timeoutMs: 10_000 });
    expect(result).toMatchObject({ status: "rejected", revisions: 1, report: null });
    expect(result.draft).toContain("weak sources");
  });

  it("refuses an answer that is not one of the options", async () => {
    const run = await engine.start(research, { topic: "fusion" }, { runId: `${store}-bad-answer` });
    await waitForHuman(engine, run.runId, "review#0");
    await expect(engine.respondToHuman(`${run.runId}:review#0`, { action: "answer", option: "maybe" })).rejects.toThrow(/approve, revise/);
  });

  it.runIf(store === "sqlite")("resumes in a new engine on the same file without re-running finished calls", async () => {
    const run = await engine.start(research, { topic: "grid storage" }, { runId: "sqlite-reopened" });
    await waitForHuman(engine, run.runId, "review#0");
    await engine.close();

    engine = await createEngine({ store: url(dir), workflows, logger: silentLogger });
    engine.startWorker({ pollInterval: 10 });
    await engine.respondToHuman(`${run.runId}:review#0`, { action: "answer", option: "approve" });
    const result: ResearchResult = await engine.result(run.runId, { timeoutMs: 10_000 });

    expect(result.status).toBe("approved");
    expect(result.usage.modelCalls).toBe(3);
    expect(countLedger(ledger)).toEqual(new Map(searchKeys(run.runId).map((key) => [key, 1])));
  });
});

describe("research agent review timeout", () => {
  it("ends as review-timed-out when nobody reviews within 72 hours", async () => {
    const clock = new ManualClock();
    const engine = await createEngine({ store: "memory:", workflows, logger: silentLogger, clock: clock.now });
    try {
      engine.startWorker({ pollInterval: 10 });
      const run = await engine.start(research, { topic: "space elevators" }, { runId: "unreviewed" });
      await waitForHuman(engine, run.runId, "review#0");
      clock.advance("71h");
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect((await engine.getRun(run.runId)).status).toBe("suspended");
      clock.advance("2h");
      const result: ResearchResult = await run.result({ timeoutMs: 10_000 });
      expect(result).toMatchObject({ status: "review-timed-out", report: null, reviewedBy: "timeout" });
    } finally {
      await engine.close();
    }
  });
});
