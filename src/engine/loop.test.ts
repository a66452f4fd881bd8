import { describe, expect, it } from "vitest";
import { deferred, sharedEngines, STORE_KINDS, testEngine } from "../../test/support/engines.js";
import { ledger } from "../../test/support/effect-ledger.js";
import { waitFor } from "../testing/wait-for.js";
import { defineWorkflow } from "./define-workflow.js";
import type { Engine } from "./engine.js";

const fast = { pollInterval: 10 };

/** A loop that adds i+1 in a step per iteration, then waits for "go" once it reaches `pauseAt`. */
function counter(name: string, count: number, pauseAt: number, snapshotEvery: number, effect: (key: string, value: number) => number) {
  return defineWorkflow({
    name,
    async run(ctx) {
      const before = await ctx.step("before", () => "b");
      const total = await ctx.loop(
        "count",
        { i: 0, sum: 0 },
        async (state, it) => {
          expect(it.index).toBe(state.i);
          if (state.i === pauseAt) await it.ctx.waitForEvent("go");
          const add = await it.ctx.step("add", ({ idempotencyKey }) => effect(idempotencyKey, state.i + 1));
          const next = { i: state.i + 1, sum: state.sum + add };
          return next.i === count ? it.done(next.sum) : next;
        },
        { snapshotEvery },
      );
      const after = await ctx.step("after", () => "a");
      return { before, total, after };
    },
  });
}

async function kinds(engine: Engine, runId: string) {
  return (await engine.journal(runId)).map((e) => `${e.kind}${e.opKey ? ` ${e.opKey}` : ""}`);
}

describe.each(STORE_KINDS)("ctx.loop on %s", (kind) => {
  it("runs iterations with scoped op keys, snapshots and a journaled result", async () => {
    const book = ledger();
    const wf = counter("count-5", 5, -1, 2, (key, value) => book.effect(key, value));
    const engine = await testEngine(kind, { workflows: [wf] });
    engine.startWorker(fast);
    await engine.start(wf, undefined, { runId: "r" });
    expect(await engine.result("r", { timeoutMs: 5000 })).toEqual({ before: "b", total: 15, after: "a" });
    const journal = await kinds(engine, "r");
    expect(journal.filter((k) => k.startsWith("loop."))).toEqual([
      "loop.started count#0",
      "loop.snapshot count#0",
      "loop.snapshot count#0",
      "loop.completed count#0",
    ]);
    expect(journal.filter((k) => k.startsWith("step.completed"))).toEqual([
      "step.completed before#0",
      ...[0, 1, 2, 3, 4].map((i) => `step.completed count#0/${i}/add#0`),
      "step.completed after#0",
    ]);
    const snapshots = (await engine.journal("r")).filter((e) => e.kind === "loop.snapshot").map((e) => e.data);
    expect(snapshots).toMatchObject([
      { iteration: 2, state: { i: 2, sum: 3 } },
      { iteration: 4, state: { i: 4, sum: 10 } },
    ]);
    expect(book.maxPerKey).toBe(1);
  });

  it("resumes from the newest snapshot: reads a bounded journal and re-runs nothing", async () => {
    const book = ledger();
    const wf = counter("count-300", 300, 250, 20, (key, value) => book.effect(key, value));
    const [first, second] = await sharedEngines(kind, [wf], [wf]);
    const worker = first!.startWorker(fast);
    await first!.start(wf, undefined, { runId: "long" });
    await waitFor(async () => (await first!.getRun("long")).status === "suspended", { timeoutMs: 20_000, what: "the loop waits at 250" });
    await worker.stop();

    const all = await second!.store.readJournal("long");
    const resume = await second!.store.readJournalForResume("long");
    // Iterations 240–249 (2 entries each), the snapshot at 240, iteration 250's wait, and the head of the run.
    expect(all.length).toBeGreaterThan(500);
    expect(resume.length).toBeLessThan(40);
    expect(resume.filter((e) => e.kind === "loop.snapshot").map((e) => JSON.parse(e.payload).iteration)).toEqual([240]);

    second!.startWorker(fast);
    await second!.sendEvent("long", "go");
    expect(await second!.result("long", { timeoutMs: 10_000 })).toEqual({ before: "b", total: (300 * 301) / 2, after: "a" });
    expect(book.runs.size).toBe(300);
    expect(book.maxPerKey).toBe(1);
  });

  it("replays a crashed iteration from the snapshot with the same state and the same keys", async () => {
    const book = ledger();
    const hang = deferred<number>();
    let crashed = false;
    const wf = defineWorkflow({
      name: "crashy-loop",
      async run(ctx) {
        return ctx.loop(
          "l",
          { seen: [] as string[], at: new Date(0) },
          async (state, it) => {
            const value = await it.ctx.step("v", async ({ idempotencyKey }) => {
              book.effect(idempotencyKey, 0);
              if (it.index === 7 && !crashed) return hang.promise;
              return it.index * 2;
            });
            const id = it.ctx.uuid();
            const next = { seen: [...state.seen, `${it.index}:${value}:${id.length}`], at: new Date(it.index) };
            // The state survives the journal's codec: a Date stays a Date after a snapshot.
            expect(state.at).toBeInstanceOf(Date);
            return it.index === 9 ? it.done(next) : next;
          },
          { snapshotEvery: 3 },
        );
      },
    });
    const [first, second] = await sharedEngines(kind, [wf], [wf]);
    const worker = first!.startWorker(fast);
    await first!.start(wf, undefined, { runId: "c" });
    await waitFor(() => book.runs.has("c:l#0/7/v#0"), { what: "iteration 7 running" });
    await worker.stop({ drain: false });
    crashed = true;
    second!.startWorker(fast);
    const result = (await second!.result("c", { timeoutMs: 5000 })) as { seen: string[]; at: Date };
    expect(result.seen).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9].map((i) => `${i}:${i * 2}:36`));
    expect(result.at).toEqual(new Date(9));
    // Only the interrupted step ran twice (it is idempotent by default).
    expect([...book.runs].filter(([, n]) => n > 1)).toEqual([["c:l#0/7/v#0", 2]]);
  });

  it("keeps the entries of ops that complete outside the loop while it runs", async () => {
    const book = ledger();
    const outer = deferred<string>();
    const release = deferred();
    let phase = 1;
    const wf = defineWorkflow({
      name: "beside",
      async run(ctx) {
        const [side, total] = await Promise.all([
          ctx.step("side", ({ idempotencyKey }) => (book.effect(idempotencyKey, 0), outer.promise)),
          ctx.loop(
            "l",
            0,
            async (n, it) => {
              await it.ctx.step("tick", ({ idempotencyKey }) => book.effect(idempotencyKey, n));
              if (n === 6) await it.ctx.waitForEvent("go");
              return n === 9 ? it.done(n + 1) : n + 1;
            },
            { snapshotEvery: 2 },
          ),
        ]);
        return { side, total, phase };
      },
    });
    const [first, second] = await sharedEngines(kind, [wf], [wf]);
    const worker = first!.startWorker(fast);
    await first!.start(wf, undefined, { runId: "b" });
    await waitFor(() => book.runs.has("b:l#0/2/tick#0"));
    // The outer step completes in the middle of the loop, between its snapshots.
    outer.resolve("side-done");
    await waitFor(async () => (await first!.getRun("b")).status === "suspended", { what: "waiting at 6" });
    await worker.stop();
    phase = 2;
    void release;
    const resume = await second!.store.readJournalForResume("b");
    expect(resume.some((e) => e.kind === "step.completed" && e.opKey === "side#0")).toBe(true);
    expect(resume.some((e) => e.opKey === "l#0/1/tick#0")).toBe(false);
    second!.startWorker(fast);
    await second!.sendEvent("b", "go");
    expect(await second!.result("b", { timeoutMs: 5000 })).toEqual({ side: "side-done", total: 10, phase: 2 });
    expect(book.maxPerKey).toBe(1);
  });

  it("nests, and resumes a run with a finished loop before an unfinished one", async () => {
    const book = ledger();
    const wf = defineWorkflow({
      name: "nested",
      async run(ctx) {
        const first = await ctx.loop("a", 0, async (n, it) => {
          await it.ctx.step("s", ({ idempotencyKey }) => book.effect(idempotencyKey, n));
          return n === 4 ? it.done(n) : n + 1;
        });
        const grid = await ctx.loop(
          "rows",
          [] as number[][],
          async (rows, row) => {
            const cells = await row.ctx.loop(
              "cols",
              [] as number[],
              async (cols, col) => {
                const v = await col.ctx.step("cell", ({ idempotencyKey }) => book.effect(idempotencyKey, row.index * 10 + col.index));
                if (row.index === 2 && col.index === 1) await col.ctx.waitForEvent("go");
                const next = [...cols, v];
                return next.length === 3 ? col.done(next) : next;
              },
              { snapshotEvery: 1 },
            );
            const next = [...rows, cells];
            return next.length === 3 ? row.done(next) : next;
          },
          { snapshotEvery: 1 },
        );
        return { first, grid };
      },
    });
    const [one, two] = await sharedEngines(kind, [wf], [wf]);
    const worker = one!.startWorker(fast);
    await one!.start(wf, undefined, { runId: "n" });
    await waitFor(async () => (await one!.getRun("n")).status === "suspended", { what: "waiting in row 2" });
    await worker.stop();
    const resume = (await two!.store.readJournalForResume("n")).map((e) => e.opKey);
    expect(resume.filter((k) => k?.startsWith("a#0/"))).toEqual([]);
    expect(resume.filter((k) => k?.startsWith("rows#0/0/") || k?.startsWith("rows#0/1/"))).toEqual([]);
    two!.startWorker(fast);
    await two!.sendEvent("n", "go");
    expect(await two!.result("n", { timeoutMs: 5000 })).toEqual({
      first: 4,
      grid: [
        [0, 1, 2],
        [10, 11, 12],
        [20, 21, 22],
      ],
    });
    expect(book.maxPerKey).toBe(1);
  });

  it("fails with non-determinism when an iteration no longer issues a journaled op", async () => {
    let variant = 1;
    const wf = defineWorkflow({
      name: "drift",
      async run(ctx) {
        return ctx.loop(
          "l",
          0,
          async (n, it) => {
            if (variant === 1 || n !== 1) await it.ctx.step("x", () => n);
            if (n === 1) await it.ctx.waitForEvent("go");
            return n === 2 ? it.done(n) : n + 1;
          },
          { snapshotEvery: 0 },
        );
      },
    });
    const [one, two] = await sharedEngines(kind, [wf], [wf]);
    const worker = one!.startWorker(fast);
    await one!.start(wf, undefined, { runId: "d" });
    await waitFor(async () => (await one!.getRun("d")).status === "suspended");
    await worker.stop();
    variant = 2;
    two!.startWorker(fast);
    await two!.sendEvent("d", "go");
    await waitFor(async () => (await two!.getRun("d")).status === "failed", { what: "the run fails" });
    const run = await two!.getRun("d");
    expect(run.error).toMatchObject({ code: "NON_DETERMINISM" });
    expect(run.error?.message).toContain("l#0/1/x#0");
  });

  it("refuses bad loops with errors that say what to do", async () => {
    const wf = defineWorkflow({
      name: "bad",
      async run(ctx, input: { mode: string }) {
        if (input.mode === "every") return ctx.loop("l", 0, (n, it) => it.done(n), { snapshotEvery: -1 });
        if (input.mode === "slash") return ctx.step("a/b", () => 1);
        return ctx.loop("l", 0, async (n, it) => {
          void it.ctx.step("dangling", () => new Promise((resolve) => setTimeout(resolve, 50)));
          return n === 1 ? it.done(n) : n + 1;
        });
      },
    });
    const engine = await testEngine(kind, { workflows: [wf] });
    engine.startWorker(fast);
    const messages: Record<string, string | undefined> = {};
    for (const mode of ["every", "slash", "dangling"]) {
      await engine.start(wf, { mode }, { runId: mode });
      await waitFor(async () => (await engine.getRun(mode)).status === "failed", { what: `${mode} fails` });
      messages[mode] = (await engine.getRun(mode)).error?.message;
    }
    expect(messages.every).toContain("snapshotEvery must be a whole number");
    expect(messages.slash).toContain('contains "/"');
    expect(messages.dangling).toContain('returned while "l#0/0/dangling#0" was still pending');
  });
});
