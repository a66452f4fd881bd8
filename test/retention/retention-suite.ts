import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createEngine } from "../../src/engine/create-engine.js";
import { defineWorkflow } from "../../src/engine/define-workflow.js";
import type { Engine, EngineOptions } from "../../src/engine/engine.js";
import { silentLogger } from "../../src/engine/logger.js";
import { isCairnError } from "../../src/core/errors.js";
import type { RunExport } from "../../src/core/run-export.js";
import type { Store } from "../../src/core/store.js";
import { ManualClock } from "../../src/testing/manual-clock.js";
import { waitFor } from "../../src/testing/wait-for.js";
import { onCleanup, tempDir } from "../support/engines.js";

/** Every table that holds rows of one run. */
export const PER_RUN_TABLES = ["runs", "journal", "inbox", "human_requests", "journal_text", "outbox"] as const;

/** A fresh, isolated store of one backend, with raw SQL access to its tables. */
export interface RetentionBackend {
  /** A store URL (the caller's clock must drive times: PostgreSQL with `clock=caller`). */
  url: string;
  /** Rows of `table` that belong to `runId`, counted by raw SQL. */
  count(table: (typeof PER_RUN_TABLES)[number], runId: string): Promise<number>;
}

const DAY = 86_400_000;
const T0 = Date.UTC(2030, 0, 1);

/** A run that touches every per-run table: an indexed step, an event, a question, an outbox message; then completes. */
const full = defineWorkflow({
  name: "full",
  version: "1",
  async run(ctx, input: { topic: string }) {
    const found = await ctx.step("search", () => `notes on ${input.topic}`, { searchText: (r) => r });
    const go = await ctx.waitForEvent<{ n: number }>("go");
    const reply = await ctx.askHuman({ name: "ship", question: "Ship it?", options: ["yes", "no"] });
    await ctx.emit("shipped", { topic: input.topic });
    return { found, n: go.n, option: reply.option };
  },
});

/** Fails at once (a run body that throws). */
const flaky = defineWorkflow({
  name: "flaky",
  version: "1",
  async run(ctx) {
    await ctx.step("try", () => 1);
    throw new Error("boom");
  },
});

/** The retention, export and import suite, for one backend. */
export function retentionSuite(name: string, open: () => Promise<RetentionBackend>): void {
  describe(`retention on ${name}`, () => {
    async function engineOn(backend: RetentionBackend, clock: ManualClock, options: EngineOptions = {}): Promise<Engine> {
      const engine = await createEngine({
        store: backend.url,
        workflows: [full, flaky],
        clock: clock.now,
        logger: silentLogger,
        outbox: { handlers: { shipped: () => undefined } },
        ...options,
      });
      onCleanup(() => engine.close());
      return engine;
    }

    async function counts(backend: RetentionBackend, runId: string): Promise<Record<string, number>> {
      const result: Record<string, number> = {};
      for (const table of PER_RUN_TABLES) result[table] = await backend.count(table, runId);
      return result;
    }

    /** Drives a `full` run to completion at the clock's time. */
    async function completeFull(engine: Engine, runId: string): Promise<void> {
      await engine.start(full, { topic: runId }, { runId });
      await engine.sendEvent(runId, "go", { n: 1 }, { eventId: `go-${runId}` });
      const [request] = await waitFor(async () => {
        const pending = await engine.listHumanRequests({ status: "pending", runId });
        return pending.length > 0 && pending;
      });
      await engine.respondToHuman(request!.requestId, { action: "answer", option: "yes" });
      await engine.result(runId, { timeoutMs: 10_000 });
      await waitFor(async () => (await engine.listOutbox({ status: ["delivered"] })).some((m) => m.runId === runId), {
        timeoutMs: 10_000,
        what: `the outbox message of ${runId} delivered`,
      });
    }

    /** A `full` run suspended on its event, with a step done. */
    async function suspendedFull(engine: Engine, runId: string): Promise<void> {
      await engine.start(full, { topic: runId }, { runId });
      await waitFor(async () => (await engine.getRun(runId)).status === "suspended", { what: `${runId} suspended` });
    }

    it("prunes only terminal runs finished before the cutoff, with every row of theirs; dry run changes nothing", async () => {
      const backend = await open();
      const clock = new ManualClock(T0);
      const engine = await engineOn(backend, clock);
      const worker = engine.startWorker({ pollInterval: 10 });
      await completeFull(engine, "old");
      await engine.start(flaky, {}, { runId: "old-failed" });
      await expect(engine.result("old-failed", { timeoutMs: 10_000 })).rejects.toThrow(/boom/);
      await suspendedFull(engine, "old-live");
      clock.advance("40d");
      await completeFull(engine, "new");
      await worker.stop();

      const before = { old: await counts(backend, "old"), live: await counts(backend, "old-live"), fresh: await counts(backend, "new") };
      for (const table of PER_RUN_TABLES) expect(before.old[table], table).toBeGreaterThan(0);

      const dry = await engine.prune({ finishedBefore: "30d", dryRun: true });
      expect(dry).toEqual({ runIds: ["old", "old-failed"], dryRun: true, archived: [], skipped: 0 });
      expect(await counts(backend, "old")).toEqual(before.old);

      const onlyCompleted = await engine.prune({ finishedBefore: "30d", statuses: ["completed"] });
      expect(onlyCompleted.runIds).toEqual(["old"]);
      for (const table of PER_RUN_TABLES) expect(await backend.count(table, "old"), table).toBe(0);
      expect(await backend.count("runs", "old-failed")).toBe(1);
      expect(await counts(backend, "old-live")).toEqual(before.live);
      expect(await counts(backend, "new")).toEqual(before.fresh);

      const byDate = await engine.prune({ finishedBefore: new Date(T0 + DAY).toISOString().slice(0, 10), workflow: "flaky" });
      expect(byDate.runIds).toEqual(["old-failed"]);
      expect(await counts(backend, "old-failed")).toEqual({ runs: 0, journal: 0, inbox: 0, human_requests: 0, journal_text: 0, outbox: 0 });
      expect((await engine.getRun("old-live")).status).toBe("suspended");
      await expect(engine.prune({ finishedBefore: "30d", statuses: ["suspended" as never] })).rejects.toThrow(/only terminal statuses/);
    });

    it("keeps a finished run whose outbox message is still to be delivered", async () => {
      const backend = await open();
      const clock = new ManualClock(T0);
      const engine = await engineOn(backend, clock, { outbox: {} });
      const worker = engine.startWorker({ pollInterval: 10 });
      await engine.start(full, { topic: "held" }, { runId: "held" });
      await engine.sendEvent("held", "go", { n: 1 }, { eventId: "go-held" });
      const [request] = await waitFor(async () => {
        const pending = await engine.listHumanRequests({ status: "pending", runId: "held" });
        return pending.length > 0 && pending;
      });
      await engine.respondToHuman(request!.requestId, { action: "answer", option: "yes" });
      await engine.result("held", { timeoutMs: 10_000 });
      await worker.stop();
      clock.advance("40d");
      expect((await engine.listOutbox({ status: ["pending"] })).map((m) => m.runId)).toEqual(["held"]);
      expect((await engine.prune({ finishedBefore: "30d" })).runIds).toEqual([]);
      expect(await backend.count("runs", "held")).toBe(1);
    });

    it("never touches a live run: prune races retries, and a run retried between selection and delete survives intact", async () => {
      const backend = await open();
      const clock = new ManualClock(T0);
      const engine = await engineOn(backend, clock);
      const worker = engine.startWorker({ pollInterval: 5, concurrency: 8 });
      const failed = Array.from({ length: 24 }, (_, i) => `f${i}`);
      for (const runId of failed) await engine.start(flaky, {}, { runId });
      await waitFor(async () => {
        for (const runId of failed) if ((await engine.getRun(runId)).status !== "failed") return false;
        return true;
      });
      for (const runId of ["s0", "s1", "s2"]) await suspendedFull(engine, runId);
      clock.advance("40d");

      // Deterministic: a run retried after prune selected it, before the delete.
      const store = engine.store;
      let hooked = false;
      const racing = new Proxy(store, {
        get(target, key, receiver) {
          if (key === "listPrunableRuns") {
            return async (...args: Parameters<Store["listPrunableRuns"]>) => {
              const selected = await target.listPrunableRuns(...args);
              if (!hooked && selected.some((r) => r.runId === "f0")) {
                hooked = true;
                await engine.retry("f0");
              }
              return selected;
            };
          }
          const value = Reflect.get(target, key, receiver) as unknown;
          return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
        },
      });
      const { prune } = await import("../../src/engine/retention.js");
      const retried = new Set(["f0", ...failed.filter((_, i) => i % 3 === 1)]);
      const revived = new Set<string>(["f0"]);
      // Concurrent: every third run is retried while prune deletes in small batches. A retry that
      // succeeds makes its run live: from then on prune must not delete it. A retry that comes after
      // the delete finds no run, which is fine.
      const [result] = await Promise.all([
        prune(racing, { finishedBefore: "30d", batchSize: 2 }, clock.now()),
        (async () => {
          for (const runId of retried) {
            if (runId === "f0") continue;
            await engine.retry(runId).then(
              () => revived.add(runId),
              (error: unknown) => expect(isCairnError(error, "RUN_NOT_FOUND"), String(error)).toBe(true),
            );
          }
        })(),
      ]);
      expect(hooked).toBe(true);
      expect(result.skipped).toBeGreaterThanOrEqual(1);
      await worker.stop();
      for (const runId of revived) {
        expect(result.runIds, `${runId} was retried, then deleted`).not.toContain(runId);
        expect(await backend.count("runs", runId), runId).toBe(1);
        const journal = await engine.journal(runId);
        expect(journal.map((e) => e.seq)).toEqual(journal.map((_, i) => i + 1));
        expect(journal.some((e) => e.kind === "run.retried")).toBe(true);
        expect(await backend.count("journal", runId)).toBe(journal.length);
      }
      for (const runId of failed) {
        if (revived.has(runId)) continue;
        expect(result.runIds, `${runId} was old, failed and never retried`).toContain(runId);
        expect(await counts(backend, runId)).toEqual({ runs: 0, journal: 0, inbox: 0, human_requests: 0, journal_text: 0, outbox: 0 });
      }
      const f0 = await engine.journal("f0");
      expect(f0.some((e) => e.kind === "run.retried")).toBe(true);
      expect(await backend.count("runs", "f0")).toBe(1);
      for (const runId of ["s0", "s1", "s2"]) expect((await engine.getRun(runId)).status).toBe("suspended");
      // Every run not retried was old and finished: all of them went.
      for (const runId of failed.filter((id) => !retried.has(id))) expect(result.runIds).toContain(runId);
    });

    it("exports, prunes, imports and exports again to the identical file; the run reads and shows as before", async () => {
      const backend = await open();
      const clock = new ManualClock(T0);
      const engine = await engineOn(backend, clock);
      const worker = engine.startWorker({ pollInterval: 10 });
      await completeFull(engine, "r1");
      await worker.stop();
      await expect(engine.exportRun("nope")).rejects.toSatisfy((e: unknown) => isCairnError(e, "RUN_NOT_FOUND"));
      const first = JSON.parse(JSON.stringify(await engine.exportRun("r1"))) as RunExport;
      const info = await engine.getRun("r1");
      const journal = await engine.journal("r1");
      const before = await counts(backend, "r1");
      clock.advance("40d");
      expect((await engine.prune({ finishedBefore: "30d" })).runIds).toEqual(["r1"]);
      await engine.importRun(first);
      // Outbox messages are not part of an export (docs/operations/retention.md): the imported run has none.
      expect(await counts(backend, "r1")).toEqual({ ...before, outbox: 0 });
      const second = JSON.parse(JSON.stringify(await engine.exportRun("r1"))) as RunExport;
      expect(second.exportedAt).not.toBe(first.exportedAt);
      expect({ ...second, exportedAt: "" }).toEqual({ ...first, exportedAt: "" });
      expect(await engine.getRun("r1")).toEqual(info);
      expect(await engine.journal("r1")).toEqual(journal);
      expect((await engine.store.searchJournal("r1", "notes", 5)).length).toBe(1);

      await expect(engine.importRun(first)).rejects.toSatisfy((e: unknown) => isCairnError(e, "RUN_CONFLICT"));
      const copy = await engine.importRun(first, { as: "r1-copy" });
      expect(copy).toMatchObject({ runId: "r1-copy", status: "completed" });
      expect(await engine.listHumanRequests({ runId: "r1-copy" })).toMatchObject([{ requestId: "r1-copy:ship#0", status: "answered" }]);
    });

    it("a suspended run exported with force imports into another store, and a worker there resumes it to completion", async () => {
      const clock = new ManualClock(T0);
      const source = await engineOn(await open(), clock);
      const worker = source.startWorker({ pollInterval: 10 });
      await suspendedFull(source, "trip");
      await worker.stop();
      await expect(source.exportRun("trip")).rejects.toSatisfy((e: unknown) => isCairnError(e, "RUN_NOT_FINISHED"));
      const file = JSON.parse(JSON.stringify(await source.exportRun("trip", { force: true }))) as unknown;

      const target = await engineOn(await open(), clock);
      expect(await target.importRun(file)).toMatchObject({ runId: "trip", status: "suspended" });
      const resumed = target.startWorker({ pollInterval: 10 });
      await target.sendEvent("trip", "go", { n: 7 }, { eventId: "go-trip" });
      const [request] = await waitFor(async () => {
        const pending = await target.listHumanRequests({ status: "pending", runId: "trip" });
        return pending.length > 0 && pending;
      });
      await target.respondToHuman(request!.requestId, { action: "answer", option: "no" });
      expect(await target.result("trip", { timeoutMs: 10_000 })).toEqual({ found: "notes on trip", n: 7, option: "no" });
      await resumed.stop();
      // The step that ran before the export was replayed, not run again: one step.started for it.
      expect((await target.journal("trip")).filter((e) => e.kind === "step.started" && e.opKey === "search#0")).toHaveLength(1);
    });

    it("refuses a bad file with a clear error and writes nothing", async () => {
      const backend = await open();
      const clock = new ManualClock(T0);
      const engine = await engineOn(backend, clock);
      const worker = engine.startWorker({ pollInterval: 10 });
      await completeFull(engine, "good");
      await worker.stop();
      const file = JSON.parse(JSON.stringify(await engine.exportRun("good"))) as RunExport;
      const bad: [string, unknown, RegExp][] = [
        ["not an object", "hello", /Not a valid Cairn run export/],
        ["another format", { ...file, format: "other" }, /format/],
        ["a newer version", { ...file, version: 2 }, /version/],
        [
          "a gap in the journal",
          { ...file, run: { ...file.run, runId: "bad" }, journal: file.journal.filter((e) => e.seq !== 3) },
          /journal\.2\.seq: expected seq 3/,
        ],
        [
          "a corrupt payload",
          { ...file, run: { ...file.run, runId: "bad" }, journal: file.journal.map((e) => (e.seq === 4 ? { ...e, payload: "{nope" } : e)) },
          /journal\.3\.payload/,
        ],
        ["an unknown status", { ...file, run: { ...file.run, runId: "bad", status: "zombie" } }, /run\.status/],
      ];
      for (const [what, data, message] of bad) {
        const error = await engine.importRun(data).catch((e: unknown) => e);
        expect(isCairnError(error, "INVALID_INPUT"), what).toBe(true);
        expect((error as Error).message, what).toMatch(message);
      }
      expect(await counts(backend, "bad")).toEqual({ runs: 0, journal: 0, inbox: 0, human_requests: 0, journal_text: 0, outbox: 0 });
    });

    it("archives each pruned run to a file that imports back", async () => {
      const backend = await open();
      const clock = new ManualClock(T0);
      const engine = await engineOn(backend, clock);
      const worker = engine.startWorker({ pollInterval: 10 });
      await completeFull(engine, "team/a");
      await completeFull(engine, "b");
      await worker.stop();
      const exported = JSON.parse(JSON.stringify(await engine.exportRun("team/a"))) as RunExport;
      clock.advance("40d");
      const dir = join(tempDir(), "archive");
      const result = await engine.prune({ finishedBefore: "30d", archiveDir: dir, batchSize: 1 });
      expect(result.runIds).toEqual(["b", "team/a"]);
      expect(readdirSync(dir).sort()).toEqual(["b.json", "team%2Fa.json"]);
      expect(await backend.count("runs", "team/a")).toBe(0);
      const archived = JSON.parse(readFileSync(join(dir, "team%2Fa.json"), "utf8")) as RunExport;
      expect({ ...archived, exportedAt: "" }).toEqual({ ...exported, exportedAt: "" });
      await engine.importRun(archived);
      expect((await engine.getRun("team/a")).status).toBe("completed");
      expect(await backend.count("journal", "team/a")).toBe(archived.journal.length);
    });

    it("the automatic policy prunes on schedule, by the engine's clock", async () => {
      const backend = await open();
      const clock = new ManualClock(T0);
      const engine = await engineOn(backend, clock, { retention: { completedAfter: "30d", failedAfter: "90d", interval: "1h", checkEvery: 5 } });
      const worker = engine.startWorker({ pollInterval: 10 });
      await completeFull(engine, "done");
      await engine.start(flaky, {}, { runId: "failed" });
      await expect(engine.result("failed", { timeoutMs: 10_000 })).rejects.toThrow(/boom/);
      clock.advance("29d");
      await completeFull(engine, "recent");
      clock.advance("2d"); // "done" is 31 days old, "recent" 2, "failed" 31 (kept for 90)
      await waitFor(async () => (await backend.count("runs", "done")) === 0, { what: "the policy pruned done" });
      expect(await counts(backend, "done")).toEqual({ runs: 0, journal: 0, inbox: 0, human_requests: 0, journal_text: 0, outbox: 0 });
      expect(await backend.count("runs", "recent")).toBe(1);
      expect(await backend.count("runs", "failed")).toBe(1);
      clock.advance("60d");
      await waitFor(async () => (await backend.count("runs", "failed")) === 0, { what: "the policy pruned failed" });
      await worker.stop();
      await expect(createEngine({ store: "memory:", retention: { interval: "1h" } })).rejects.toThrow(/completedAfter/);
    });
  });
}
