/**
 * Records the replay fixtures (`test/fixtures/journals/*.json`): runs each example to completion on
 * the scripted model, in memory, and exports every run it made (`cairn.run/1`) as
 * `<scenario>--<runId>@<version>.json`. Run it with
 * `CAIRN_RECORD_FIXTURES=1 npx vitest run test/replay-fixtures.test.ts` when a deliberate change of
 * an example's code comes with a new workflow version: it writes only the files missing (the new
 * version's) and never deletes or overwrites one, so the old version's journals stay pinned.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { JOURNAL_FILE_FORMAT, type JournalFile } from "../../src/core/deploys.js";
import { createEngine } from "../../src/engine/create-engine.js";
import type { Engine, Worker } from "../../src/engine/engine.js";
import { silentLogger } from "../../src/engine/logger.js";
import { approval } from "../../examples/approval.js";
import { codeMigration, seedRepository } from "../../examples/code-migration.js";
import { workflows } from "../../examples/index.js";
import { LEDGER_ENV } from "../../examples/ledger.js";
import { research, STEP_MS_ENV } from "../../examples/research-agent.js";
import { answerWhenAsked, fixReportsByHand, waitFor, waitForEventWait, waitForHuman } from "../../examples/test-helpers.js";

const HOUR = 3_600_000;

/** Exports a run and its journal as the `cairn.run/1` format. */
export async function exportRun(engine: Engine, runId: string): Promise<JournalFile> {
  const run = await engine.store.getRun(runId);
  if (!run) throw new Error(`no run ${runId}`);
  const journal = await engine.store.readJournal(runId);
  return { format: JOURNAL_FILE_FORMAT, run: { ...run }, journal };
}

/** Every run of the engine's store, exported, with its children. */
async function exportAll(engine: Engine): Promise<JournalFile[]> {
  const page = await engine.listRuns({ limit: 1000 });
  return Promise.all(page.runs.map((run) => exportRun(engine, run.runId)));
}

/** The fixture file name of one exported run: scenario, run id and the run's workflow version. */
export function fixtureFileName(scenario: string, run: { runId: string; version: string }): string {
  return `${scenario}--${run.runId.replace(/[^\w.-]+/g, "_")}@${run.version.replace(/[^\w.-]+/g, "_")}.json`;
}

/**
 * Runs every scenario and writes one file per run to `dir` unless a file of that name (same scenario,
 * run and version) exists; returns the names written and the names kept as they were.
 */
export async function recordFixtures(dir: string): Promise<{ written: string[]; kept: string[] }> {
  for (const key of ["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "CAIRN_MODEL"]) delete process.env[key];
  mkdirSync(dir, { recursive: true });
  const scratch = mkdtempSync(join(tmpdir(), "cairn-fixtures-"));
  process.env[LEDGER_ENV] = join(scratch, "ledger.txt");
  const written: string[] = [];
  const kept: string[] = [];
  const scenario = async (name: string, play: (engine: Engine, clock: { now: number }, worker: Worker) => Promise<void>) => {
    const clock = { now: Date.UTC(2026, 0, 5, 9) };
    const engine = await createEngine({ store: "memory:", workflows, logger: silentLogger, clock: () => clock.now });
    const worker = engine.startWorker({ pollInterval: 5 });
    try {
      await play(engine, clock, worker);
      for (const exported of await exportAll(engine)) {
        const file = fixtureFileName(name, exported.run);
        if (existsSync(join(dir, file))) {
          kept.push(file);
          continue;
        }
        writeFileSync(join(dir, file), `${JSON.stringify(exported, null, 2)}\n`, { flag: "wx" });
        written.push(file);
      }
    } finally {
      await engine.close();
    }
  };
  try {
    await scenario("research-approved", async (engine, clock) => {
      const run = await engine.start(research, { topic: "solid-state batteries" }, { runId: "research-1" });
      await waitForHuman(engine, run.runId, "review#0");
      clock.now += HOUR;
      await engine.respondToHuman(`${run.runId}:review#0`, { action: "answer", option: "approve", by: "ada" });
      await run.result({ timeoutMs: 20_000 });
    });
    await scenario("research-revised", async (engine) => {
      const run = await engine.start(research, { topic: "tidal power" }, { runId: "research-2" });
      await answerWhenAsked(engine, run.runId, "review#0", "revise", { by: "ada", message: "add costs" });
      await answerWhenAsked(engine, run.runId, "review#1", "approve", { by: "ada" });
      await run.result({ timeoutMs: 20_000 });
    });
    await scenario("approval-escalated", async (engine, clock) => {
      const run = await engine.start(approval, { request: "Buy 3 GPUs", approver: "ana", manager: "ben" }, { runId: "po-2" });
      await waitForEventWait(engine, run.runId, "approval#0");
      clock.now += 72 * HOUR + 1;
      await waitForEventWait(engine, run.runId, "approval#1");
      await engine.sendEvent(run.runId, "approval", { approved: true, by: "ben" }, { eventId: "po-2:ben" });
      await run.result({ timeoutMs: 20_000 });
    });
    await scenario("code-migration", async (engine) => {
      const repo = join(scratch, "repo");
      seedRepository(repo);
      const run = await engine.start(codeMigration, { dir: repo, batchSize: 2 }, { runId: "migrate-1" });
      await answerWhenAsked(engine, run.runId, "plan-review#0", "approve", { by: "lead" });
      await waitForHuman(engine, run.runId, "escalate#0");
      fixReportsByHand(repo);
      await engine.respondToHuman(`${run.runId}:escalate#0`, { action: "answer", option: "fixed", by: "dev" });
      await answerWhenAsked(engine, run.runId, "sign-off#0", "approve", { by: "lead" });
      await run.result({ timeoutMs: 20_000 });
    });
    // The demo: the research agent's worker dies half-way through its searches and another resumes it.
    await scenario("demo-crash", async (engine, _clock, first) => {
      process.env[STEP_MS_ENV] = "150";
      try {
        const run = await engine.start(research, { topic: "grid batteries" }, { runId: "demo-research" });
        const child = `${run.runId}/researcher#0`;
        await waitFor(
          async () => (await engine.journal(child).catch(() => [])).filter((e) => e.kind === "step.completed" && e.opKey?.includes("tool-search_")).length >= 1,
          {
            timeoutMs: 20_000,
            what: "a first search to finish",
          },
        );
        await first.stop({ drain: false });
        engine.startWorker({ pollInterval: 5 });
        await answerWhenAsked(engine, run.runId, "review#0", "approve", { by: "ada", timeoutMs: 20_000 });
        await run.result({ timeoutMs: 20_000 });
      } finally {
        delete process.env[STEP_MS_ENV];
      }
    });
  } finally {
    delete process.env[LEDGER_ENV];
    rmSync(scratch, { recursive: true, force: true });
  }
  return { written, kept };
}
