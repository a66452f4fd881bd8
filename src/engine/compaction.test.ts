import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { sharedEngines, STORE_KINDS, tempDir, testEngine } from "../../test/support/engines.js";
import { ledger } from "../../test/support/effect-ledger.js";
import { isCairnError } from "../core/errors.js";
import type { JournalEntry } from "../core/journal.js";
import { waitFor } from "../testing/wait-for.js";
import { defineWorkflow } from "./define-workflow.js";
import type { Engine } from "./engine.js";

const fast = { pollInterval: 10 };

/** A loop of `count` iterations (a step each, with a ~100-byte result) that waits for "go" at `pauseAt`. */
function counter(name: string, count: number, pauseAt: number, snapshotEvery: number, effect: (key: string, value: number) => number) {
  return defineWorkflow({
    name,
    async run(ctx) {
      const before = await ctx.step("before", () => "b");
      const total = await ctx.loop(
        "count",
        { i: 0, sum: 0 },
        async (state, it) => {
          if (state.i === pauseAt) await it.ctx.waitForEvent("go");
          const add = await it.ctx.step("add", ({ idempotencyKey }) => ({ n: effect(idempotencyKey, state.i + 1), pad: "x".repeat(100) }));
          const next = { i: state.i + 1, sum: state.sum + add.n };
          return next.i === count ? it.done(next.sum) : next;
        },
        { snapshotEvery },
      );
      const after = await ctx.step("after", () => "a");
      return { before, total, after };
    },
  });
}

/** Entries and payload bytes of a run's stored journal. */
async function size(engine: Engine, runId: string): Promise<{ entries: number; bytes: number }> {
  const journal = await engine.store.readJournal(runId);
  return { entries: journal.length, bytes: journal.reduce((sum, entry) => sum + Buffer.byteLength(entry.payload), 0) };
}

const seqsOf = (entries: readonly JournalEntry[]) => entries.map((entry) => entry.seq);

async function suspendedAt(engine: Engine, runId: string) {
  await waitFor(async () => (await engine.getRun(runId)).status === "suspended", { timeoutMs: 30_000, what: `${runId} waits for go` });
}

describe.each(STORE_KINDS)("loop compaction on %s", (kind) => {
  it("compacts a 200-iteration run to its snapshot and tail; it resumes elsewhere to its uncompacted twin's result and replays", async () => {
    const book = ledger();
    const wf = counter("count-200", 200, 150, 10, (key, value) => book.effect(key, value));
    const [first, second] = await sharedEngines(kind, [wf], [wf]);
    const worker = first!.startWorker(fast);
    await first!.start(wf, undefined, { runId: "compacted" });
    await first!.start(wf, undefined, { runId: "twin" });
    await suspendedAt(first!, "compacted");
    await suspendedAt(first!, "twin");
    await worker.stop();

    const before = await size(first!, "compacted");
    const resumeBefore = await first!.store.readJournalForResume("compacted");
    const dry = await first!.compact({ checkpointBefore: 0, runId: "compacted", dryRun: true });
    expect(await size(first!, "compacted")).toEqual(before);
    const archiveDir = tempDir();
    const done = await first!.compact({ checkpointBefore: 0, runId: "compacted", archiveDir });
    const after = await size(first!, "compacted");
    console.log(
      `[compaction ${kind}] 200-iteration loop paused at 150: ${before.entries} entries / ${before.bytes} B -> ${after.entries} entries / ${after.bytes} B`,
    );
    expect(done).toMatchObject({ runIds: ["compacted"], entries: before.entries - after.entries, bytes: before.bytes - after.bytes, dryRun: false });
    expect(dry).toMatchObject({ runIds: ["compacted"], entries: done.entries, dryRun: true, archived: [] });
    // The deleted entries were archived first (for audit: they cannot go back into the run).
    const archived = JSON.parse(readFileSync(done.archived[0]!, "utf8")) as { format: string; runId: string; entries: { seq: number }[] };
    expect(done.archived).toEqual([join(archiveDir, `compacted.compacted-${(await first!.getCompaction("compacted"))!.coveredSeq}.json`)]);
    expect(archived).toMatchObject({ format: "cairn.compacted-entries", runId: "compacted" });
    expect(archived.entries).toHaveLength(done.entries);
    // ~2 entries per iteration and a snapshot per 10 before; now the head, the newest snapshot and the tail.
    expect(before.entries).toBeGreaterThan(300);
    expect(after.entries).toBeLessThan(20);
    expect(after.bytes * 10).toBeLessThan(before.bytes);
    expect(await size(first!, "twin")).toMatchObject({ entries: before.entries });
    expect(await first!.getCompaction("compacted")).toMatchObject({ entries: done.entries, bytes: done.bytes });
    expect(await first!.getCompaction("twin")).toBeUndefined();
    // A resume reads what it read before; dry replay still passes.
    expect(seqsOf(await first!.store.readJournalForResume("compacted"))).toEqual(seqsOf(resumeBefore));
    expect(await first!.replay("compacted")).toMatchObject({ ok: true });
    // Nothing left to do until a newer checkpoint ages.
    expect(await first!.compact({ checkpointBefore: 0, runId: "compacted" })).toMatchObject({ runIds: [], entries: 0 });

    // Another engine (nothing in memory) finishes both, with the same result and no step run twice.
    second!.startWorker(fast);
    await second!.sendEvent("compacted", "go");
    await second!.sendEvent("twin", "go");
    const expected = { before: "b", total: (200 * 201) / 2, after: "a" };
    expect(await second!.result("compacted", { timeoutMs: 20_000 })).toEqual(expected);
    expect(await second!.result("twin", { timeoutMs: 20_000 })).toEqual(expected);
    expect(book.maxPerKey).toBe(1);
    expect(book.runs.size).toBe(400);

    // Finished: the completion supersedes every iteration; export and import carry the marker.
    await second!.compact({ checkpointBefore: 0 });
    const finished = await size(second!, "compacted");
    expect(finished.entries).toBeLessThan(15);
    expect(await second!.replay("compacted")).toMatchObject({ ok: true });
    const file = await second!.exportRun("compacted");
    expect(file.compaction?.entries).toBe(file.run.lastSeq - file.journal.length);
    await second!.importRun(JSON.parse(JSON.stringify(file)), { as: "restored" });
    expect(await second!.getCompaction("restored")).toEqual(file.compaction);
    expect(await second!.replay("restored")).toMatchObject({ ok: true });
    expect((await second!.getRun("restored")).output).toEqual(expected);
  });

  it("refuses a fork inside the compacted range with a clear error; a fork after it runs to the same result", async () => {
    const book = ledger();
    const wf = counter("count-40", 40, 30, 5, (key, value) => book.effect(key, value));
    const engine = await testEngine(kind, { workflows: [wf] });
    const worker = engine.startWorker(fast);
    await engine.start(wf, undefined, { runId: "src" });
    await suspendedAt(engine, "src");
    await worker.stop();
    await engine.compact({ checkpointBefore: 0 });
    const marker = (await engine.getCompaction("src"))!;
    expect(marker.entries).toBeGreaterThan(40);
    // The run's view (GET /runs/:id, the dashboard's "entries" fact) names it.
    expect((await engine.getRun("src")).compaction).toEqual(marker);

    const refused = await engine.fork("src", { atSeq: marker.coveredSeq - 1 }).catch((error: unknown) => error);
    expect(isCairnError(refused) && refused.code).toBe("INVALID_INPUT");
    expect((refused as Error).message).toMatch(new RegExp(`falls inside the compacted part of run "src".*fork at seq ${marker.coveredSeq} or later`));

    const last = (await engine.store.getRun("src"))!.lastSeq;
    const fork = await engine.fork("src", { atSeq: last, runId: "fork" });
    expect(fork.created).toBe(true);
    expect(await engine.getCompaction("fork")).toMatchObject({ entries: marker.entries, coveredSeq: marker.coveredSeq });
    engine.startWorker(fast);
    await suspendedAt(engine, "fork");
    await engine.sendEvent("fork", "go");
    await engine.sendEvent("src", "go");
    const expected = { before: "b", total: (40 * 41) / 2, after: "a" };
    expect(await engine.result("fork", { timeoutMs: 10_000 })).toEqual(expected);
    expect(await engine.result("src", { timeoutMs: 10_000 })).toEqual(expected);
    expect(await engine.replay("fork")).toMatchObject({ ok: true });
  });

  it("keepSnapshots leaves the newest checkpoints and what lies between them, so a fork can cut there", async () => {
    const wf = counter("count-40k", 40, 30, 5, (_key, value) => value);
    const engine = await testEngine(kind, { workflows: [wf] });
    const worker = engine.startWorker(fast);
    await engine.start(wf, undefined, { runId: "src" });
    await suspendedAt(engine, "src");
    await worker.stop();
    const snapshots = async () => (await engine.store.readJournal("src")).filter((e) => e.kind === "loop.snapshot").map((e) => e.seq);
    const all = await snapshots();
    expect(all).toHaveLength(6); // after iterations 5, 10, … 30
    const kept = await engine.compact({ checkpointBefore: 0, keepSnapshots: 3 });
    expect(kept.entries).toBeGreaterThan(30);
    expect(await snapshots()).toEqual(all.slice(-3));
    expect(await engine.getCompaction("src")).toMatchObject({ coveredSeq: all.at(-3) });
    // A fork between the kept snapshots works; compacting again with the default keeps only the newest.
    const fork = await engine.fork("src", { atSeq: all.at(-2)! + 1, runId: "fork" });
    expect(fork.created).toBe(true);
    const again = await engine.compact({ checkpointBefore: 0, runId: "src" });
    expect(again.entries).toBeGreaterThan(10);
    expect(await snapshots()).toEqual(all.slice(-1));
    await expect(engine.compact({ checkpointBefore: 0, keepSnapshots: 0 })).rejects.toThrow(/compact: keepSnapshots/);
  });

  it("is applied by the retention policy of every worker (compactLoopsAfter), and a bad policy is refused", async () => {
    await expect(testEngine(kind, { retention: { compactLoopsAfter: "soon" as "1h" } })).rejects.toThrow(/retention.*compactLoopsAfter/);
    const wf = counter("count-30", 30, 25, 5, (_key, value) => value);
    const engine = await testEngine(kind, { workflows: [wf], retention: { compactLoopsAfter: 0, interval: 50, checkEvery: 10 } });
    engine.startWorker(fast);
    await engine.start(wf, undefined, { runId: "r" });
    await suspendedAt(engine, "r");
    await waitFor(async () => ((await engine.getCompaction("r"))?.entries ?? 0) > 30, { timeoutMs: 10_000, what: "the policy compacts r" });
    await engine.sendEvent("r", "go");
    expect(await engine.result("r", { timeoutMs: 10_000 })).toEqual({ before: "b", total: (30 * 31) / 2, after: "a" });
  });
});
