import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { parseJournalFile, type JournalFile } from "../src/core/deploys.js";
import { CairnError } from "../src/core/errors.js";
import { defineWorkflow } from "../src/engine/define-workflow.js";
import { dryReplay } from "../src/engine/dry-replay.js";
import { isOutcome } from "../src/core/journal.js";
import { decode } from "../src/core/serialize.js";
import { isCheckpoint, readForResume } from "../src/core/resume.js";
import type { Workflow } from "../src/engine/workflow.js";
import { workflows } from "../examples/index.js";
import { approval } from "../examples/approval.js";
import { fixtureFileName, recordFixtures } from "./support/record-fixtures.js";
import { testEngine } from "./support/engines.js";
import { waitFor } from "../src/testing/wait-for.js";

// Replay compatibility is pinned: journals recorded from the examples are committed, and the current
// code must replay every one of them. A change that breaks replay of older runs fails here.
const DIR = resolve("test/fixtures/journals");

if (process.env.CAIRN_RECORD_FIXTURES === "1") {
  // Writes only the missing files (a new version's): the old versions' journals stay pinned.
  it("records the missing fixtures", async () => {
    const { written, kept } = await recordFixtures(DIR);
    expect(written.length + kept.length).toBeGreaterThan(4);
  }, 120_000);
}

function load(file: string): JournalFile {
  return parseJournalFile(JSON.parse(readFileSync(join(DIR, file), "utf8")), file);
}

const registered = new Map<string, Workflow<any, any>>(workflows.map((w) => [`${w.name}@${w.version}`, w]));
const files = readdirSync(DIR)
  .filter((file) => file.endsWith(".json"))
  .sort();

describe("committed journals replay against the current code", () => {
  it("covers every example", () => {
    const names = new Set(files.map((file) => load(file).run.workflow));
    expect([...names].sort()).toEqual(["approval", "code-migration", "code-migrator", "research", "researcher"]);
    expect(files.some((file) => file.startsWith("demo-crash--"))).toBe(true);
  });

  it.each(files)("%s is named after its scenario, run and workflow version", (file) => {
    const { run } = load(file);
    expect(file).toBe(fixtureFileName(file.slice(0, file.indexOf("--")), run));
  });

  it.each(files)("%s replays cleanly to its last entry", async (file) => {
    const exported = load(file);
    const workflow = registered.get(`${exported.run.workflow}@${exported.run.version}`);
    expect(workflow, `${exported.run.workflow}@${exported.run.version} is registered`).toBeDefined();
    const report = await dryReplay(workflow!, exported.run, exported.journal);
    expect(report.divergence).toBeUndefined();
    expect(report).toMatchObject({ ok: true, stoppedAt: "completed", replayedSeq: exported.journal.at(-1)!.seq });
    // Every outcome entry reached: code that stops early (e.g. refusing with MANIFEST_CHANGED) is no clean replay.
    // (Entries a loop checkpoint supersedes are not replayed, on a worker or here.)
    const journal = exported.journal;
    const resumed = await readForResume({
      latestCheckpointBelow: async (below) => journal.findLast((e) => e.seq < below && isCheckpoint(e.kind)),
      range: async (from, below) => journal.filter((e) => e.seq >= from && e.seq < below),
      seqs: async (seqs) => journal.filter((e) => seqs.includes(e.seq)),
    });
    const outcomes = resumed.filter((entry) => isOutcome(entry.kind, decode(entry.payload))).length;
    expect(outcomes).toBeGreaterThan(0);
    expect(report.deliveredOutcomes).toBe(outcomes);
  });

  it("the demo's journal holds a recovery (the worker died mid-search)", () => {
    const demo = files.filter((file) => file.startsWith("demo-crash--")).map(load);
    const kinds = demo.flatMap((run) => run.journal.map((entry) => entry.kind));
    expect(kinds).toContain("run.released");
  });
});

describe("committed journals resume on a real worker", () => {
  /** A scenario's runs (the parent and its children) as they stood just before their run.completed. */
  const scenarios = [...new Set(files.map((file) => file.slice(0, file.indexOf("--"))))];

  it.each(scenarios)(
    "%s: a worker replays every run to its end and runs nothing live",
    async (scenario) => {
      const exported = files.filter((file) => file.startsWith(`${scenario}--`)).map(load);
      const engine = await testEngine("sqlite", { workflows });
      for (const { run, journal } of exported) {
        expect(journal.at(-1)!.kind).toBe("run.completed");
        const cut = journal.slice(0, -1).map(({ runId: _, ...entry }) => entry);
        await engine.importRun({
          format: "cairn.run-export",
          version: 1,
          exportedAt: new Date(0).toISOString(),
          run: {
            ...run,
            status: "pending",
            output: null,
            error: null,
            finishedAt: null,
            leaseOwner: null,
            leaseExpiresAt: null,
            wakeAt: null,
            waitingFor: null,
            lastSeq: cut.length,
          },
          journal: cut,
          inbox: [],
          humanRequests: [],
        });
      }
      const worker = engine.startWorker({ pollInterval: 5 });
      try {
        for (const { run, journal } of exported) {
          const ended = await waitFor(
            async () => {
              const { status } = await engine.getRun(run.runId);
              return status !== "pending" && status !== "running" ? status : undefined;
            },
            { what: `${run.runId} ended`, timeoutMs: 30_000 },
          );
          expect(ended).toBe("completed");
          const resumed = await engine.store.readJournal(run.runId);
          const added = resumed.slice(journal.length - 1);
          // Every op's outcome came from the journal: the worker wrote only the run's own entries.
          expect(added.filter((entry) => entry.opKey !== null)).toEqual([]);
          expect(added.at(-1)!.kind).toBe("run.completed");
          expect(decode(added.at(-1)!.payload)).toEqual(decode(journal.at(-1)!.payload));
        }
      } finally {
        await worker.stop();
      }
    },
    60_000,
  );
});

describe("a changed workflow is reported as a divergence", () => {
  /** The approval example with its "notify-approver" step renamed: same name, same version. */
  const renamed = defineWorkflow({
    name: approval.name,
    version: approval.version,
    run(ctx, input: Parameters<typeof approval.run>[1]) {
      const changed = Object.create(ctx) as typeof ctx;
      changed.step = ((name: string, fn: never, options: never) =>
        ctx.step(name === "notify-approver" ? "ping-approver" : name, fn, options)) as typeof ctx.step;
      return approval.run(changed, input);
    },
  });

  it("names the renamed op's journaled key and what the code does instead", async () => {
    const file = files.find((f) => f.startsWith("approval-escalated--"))!;
    const exported = load(file);
    const report = await dryReplay(renamed, exported.run, exported.journal);
    expect(report.ok).toBe(false);
    expect(report.stoppedAt).toBe("diverged");
    expect(report.divergence).toMatchObject({ opKey: "notify-approver#0", actual: 'issues "ping-approver#0" instead and never reaches it' });
    expect(report.divergence!.expected).toMatch(/^step\.completed at seq \d+$/);
    expect(report.divergence!.message).toContain("Non-determinism");
    expect(report.deliveredOutcomes).toBe(0);
  });

  it("names the outcome entry the code never reached, not a later entry of the same op (a compensation)", async () => {
    const trip = (hotelName: string) =>
      defineWorkflow({
        name: "trip",
        async run(ctx) {
          await ctx.step(hotelName, () => "room-1", { compensate: async () => undefined });
          await ctx.step(
            "flight",
            () => {
              throw new Error("sold out");
            },
            { retry: { maxAttempts: 1 } },
          );
        },
      });
    const engine = await testEngine("memory", { workflows: [trip("hotel")] });
    const worker = engine.startWorker({ pollInterval: 5 });
    await engine.start(trip("hotel"), undefined, { runId: "t1" });
    await waitFor(async () => (await engine.getRun("t1")).status === "compensated", { what: "the trip compensated" });
    await worker.stop();
    const journal = await engine.store.readJournal("t1");
    const completed = journal.find((e) => e.opKey === "hotel#0" && e.kind === "step.completed")!;
    expect(journal.some((e) => e.opKey === "hotel#0" && e.seq > completed.seq)).toBe(true);
    const run = (await engine.store.getRun("t1"))!;
    const report = await dryReplay(trip("motel"), run, journal);
    expect(report.divergence).toMatchObject({ opKey: "hotel#0", expected: `step.completed at seq ${completed.seq}` });
  });

  it("code that refuses to run (MANIFEST_CHANGED) before the journal's outcomes is a divergence, not a clean end", async () => {
    const exported = load(files.find((f) => f.startsWith("approval-escalated--"))!);
    const refusing = defineWorkflow({
      name: approval.name,
      version: approval.version,
      run() {
        throw new CairnError("MANIFEST_CHANGED", "started under a different agent definition");
      },
    });
    const report = await dryReplay(refusing, exported.run, exported.journal);
    expect(report).toMatchObject({ ok: false, stoppedAt: "diverged", deliveredOutcomes: 0 });
    expect(report.divergence!.actual).toMatch(/^throws MANIFEST_CHANGED \(started under a different agent definition\) before reaching it$/);
    expect(report.divergence!.expected).toMatch(/^step\.completed at seq \d+$/);
  });

  it("code that ends otherwise than the journal's terminal entry is a divergence", async () => {
    const exported = load(files.find((f) => f.startsWith("approval-escalated--"))!);
    const end = exported.journal.at(-1)!;
    expect(end.kind).toBe("run.completed");
    const throwing = defineWorkflow({
      name: approval.name,
      version: approval.version,
      async run(ctx, input: Parameters<typeof approval.run>[1]) {
        await approval.run(ctx, input);
        throw new Error("changed my mind");
      },
    });
    const report = await dryReplay(throwing, exported.run, exported.journal);
    expect(report.divergence).toMatchObject({ opKey: "(run end)", expected: `run.completed at seq ${end.seq}`, actual: "throws an error (changed my mind)" });
    // The same journal ending in a failure, against code that returns.
    const failed = [
      ...exported.journal.slice(0, -1),
      { ...end, kind: "run.failed" as const, payload: JSON.stringify({ error: { name: "Error", message: "boom" } }) },
    ];
    const returned = await dryReplay(approval, exported.run, failed);
    expect(returned.divergence).toMatchObject({ opKey: "(run end)", expected: `run.failed at seq ${end.seq} (Error)`, actual: "returns" });
  });

  it("reports another op kind at a journaled key", async () => {
    const exported = load(files.find((f) => f.startsWith("approval-escalated--"))!);
    const sleeper = defineWorkflow({
      name: approval.name,
      version: approval.version,
      async run(ctx) {
        await ctx.sleep("notify-approver", 10);
      },
    });
    const report = await dryReplay(sleeper, exported.run, exported.journal);
    expect(report.divergence).toMatchObject({ opKey: "notify-approver#0", actual: "issues a sleep with that key" });
    expect(report.divergence!.expected).toMatch(/^a step \(step\.started at seq \d+\)$/);
  });
});
