import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createEngine, silentLogger, type Engine } from "cairn";
import { checkSource, codeMigration, fixSource, listSourceFiles, migrateSource, SAMPLE_FILES, seedRepository, type MigrationResult } from "./code-migration.js";
import { workflows } from "./index.js";
import { LEDGER_ENV, readLedger } from "./ledger.js";
import { answerWhenAsked, fixReportsByHand, HAND_FIXED_REPORTS, waitForHuman } from "./test-helpers.js";

delete process.env.ANTHROPIC_API_KEY;
delete process.env.OPENAI_API_KEY;
delete process.env.CAIRN_MODEL;

describe("the migration, the check and the fix", () => {
  it("migrates plain calls, leaves retryGet to the fixer and getSync to a person", () => {
    expect(checkSource(SAMPLE_FILES["src/orders.js"]!)).toMatch(/legacy-http/);
    expect(checkSource(migrateSource(SAMPLE_FILES["src/orders.js"]!))).toBeNull();
    const invoices = migrateSource(SAMPLE_FILES["src/invoices.js"]!);
    expect(checkSource(invoices)).toMatch(/retryGet/);
    expect(checkSource(fixSource(invoices))).toBeNull();
    expect(fixSource(fixSource(invoices))).toBe(fixSource(invoices));
    const reports = migrateSource(SAMPLE_FILES["src/reports.js"]!);
    expect(checkSource(fixSource(reports))).toMatch(/getSync/);
    expect(checkSource(HAND_FIXED_REPORTS)).toBeNull();
  });
});

describe.each([
  { store: "memory", url: (_dir: string) => "memory:" },
  { store: "sqlite", url: (dir: string) => `sqlite:${join(dir, "migration.db")}` },
])("code-migration agent on the $store store", ({ store, url }) => {
  let dir: string;
  let repo: string;
  let ledger: string;
  let engine: Engine;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), "cairn-migration-"));
    repo = join(dir, "repo");
    seedRepository(repo);
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

  it("plans, waits for plan review, migrates in batches with auto-fix and escalation, and is signed off", async () => {
    const run = await engine.start(codeMigration, { dir: repo, batchSize: 2 }, { runId: `${store}-migrate` });

    await waitForHuman(engine, run.runId, "plan-review#0");
    const [planRequest] = await engine.listHumanRequests({ status: "pending", runId: run.runId });
    expect(planRequest).toMatchObject({ options: ["approve", "reject"], question: "Migrate 5 files in 3 batches of up to 2?" });
    // Nothing is touched before the plan is approved.
    expect(readLedger(ledger)).toEqual([]);
    await engine.respondToHuman(planRequest!.requestId, { action: "answer", option: "approve", by: "lead" });

    // Batch 1 (invoices, orders) passes after one auto-fix; batch 2 (reports, search) still fails on getSync.
    await waitForHuman(engine, run.runId, "escalate#0");
    const [escalation] = await engine.listHumanRequests({ status: "pending", runId: run.runId });
    expect(escalation!.question).toMatch(/^Batch 2 of 3 still fails after auto-fix: src\/reports\.js: calls getSync/);
    expect(escalation!.options).toEqual(["fixed", "accept", "abort"]);
    // The deadline is taken when the question is asked; the row is stamped when it commits, a moment later.
    expect(escalation!.timeoutAt! - escalation!.createdAt).toBeGreaterThan(72 * 3600_000 - 1000);
    expect(escalation!.timeoutAt! - escalation!.createdAt).toBeLessThanOrEqual(72 * 3600_000);
    // A person fixes the file by hand, then says so.
    fixReportsByHand(repo);
    await engine.respondToHuman(escalation!.requestId, { action: "answer", option: "fixed", by: "dev" });

    await answerWhenAsked(engine, run.runId, "sign-off#0", "approve", { by: "lead" });
    const result: MigrationResult = await run.result({ timeoutMs: 10_000 });

    expect(result).toEqual({
      status: "signed-off",
      files: listSourceFiles(repo),
      decidedBy: "lead",
      batches: [
        { files: ["src/invoices.js", "src/orders.js"], outcome: "passed", fixes: 1, escalations: 0 },
        { files: ["src/reports.js", "src/search.js"], outcome: "fixed-by-hand", fixes: 2, escalations: 1 },
        { files: ["src/users.js"], outcome: "passed", fixes: 0, escalations: 0 },
      ],
    });
    // Every file migrated exactly once (one stamp, one ledger line) and passing the check.
    const migrations = readLedger(ledger).filter((line) => line.startsWith("migrate "));
    for (const file of result.files) {
      const text = readFileSync(join(repo, file), "utf8");
      expect(text.match(/\/\/ migrated-by: /g), file).toHaveLength(1);
      expect(checkSource(text), file).toBeNull();
      expect(
        migrations.filter((line) => line.split(" ")[1] === file),
        file,
      ).toHaveLength(1);
    }
    expect(readLedger(ledger).filter((line) => line.startsWith("fix "))).toHaveLength(1);
  });

  it("asks again when the hand fix does not pass, and can accept a failing batch", async () => {
    const run = await engine.start(codeMigration, { dir: repo, batchSize: 5, maxFixRounds: 1 }, { runId: `${store}-accept` });
    await answerWhenAsked(engine, run.runId, "plan-review#0", "approve");
    await answerWhenAsked(engine, run.runId, "escalate#0", "fixed"); // nobody fixed anything
    await answerWhenAsked(engine, run.runId, "escalate#1", "accept");
    await answerWhenAsked(engine, run.runId, "sign-off#0", "reject", { by: "lead" });
    const result: MigrationResult = await run.result({ timeoutMs: 10_000 });
    expect(result).toMatchObject({ status: "rejected", decidedBy: "lead", batches: [{ outcome: "accepted-failing", fixes: 2, escalations: 2 }] });
  });

  it("touches no file when the plan is rejected, and stops when an escalation aborts", async () => {
    const rejected = await engine.start(codeMigration, { dir: repo }, { runId: `${store}-rejected` });
    await answerWhenAsked(engine, rejected.runId, "plan-review#0", "reject", { by: "lead" });
    expect(await rejected.result({ timeoutMs: 10_000 })).toMatchObject({ status: "plan-rejected", batches: [] });
    expect(readLedger(ledger)).toEqual([]);

    const aborted = await engine.start(codeMigration, { dir: repo }, { runId: `${store}-aborted` });
    await answerWhenAsked(engine, aborted.runId, "plan-review#0", "approve");
    await answerWhenAsked(engine, aborted.runId, "escalate#0", "abort");
    const result: MigrationResult = await aborted.result({ timeoutMs: 10_000 });
    expect(result.status).toBe("aborted");
    expect(result.batches.map((b) => b.outcome)).toEqual(["passed", "accepted-failing"]);
    expect(readFileSync(join(repo, "src/users.js"), "utf8")).toBe(SAMPLE_FILES["src/users.js"]); // batch 3 never ran
  });

  it("fails a run whose directory is not absolute", async () => {
    const run = await engine.start(codeMigration, { dir: "relative/repo" }, { runId: `${store}-bad-dir` });
    await expect(run.result({ timeoutMs: 10_000 })).rejects.toThrow(/absolute directory/);
  });
});
