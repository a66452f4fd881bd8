/**
 * Flow control, end to end, on one kind of store: the load test with several worker processes and
 * an external ledger, suspended runs freeing their slot, the rate limit read back from journal
 * timestamps, priorities, and bad configuration. Run by test/flow-control.test.ts (SQLite) and
 * test/flow-control.pg.test.ts (PostgreSQL).
 */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { promisify } from "node:util";
import { join, resolve } from "node:path";
import { expect, it } from "vitest";
import { createEngine } from "../../src/engine/create-engine.js";
import { defineWorkflow } from "../../src/engine/define-workflow.js";
import type { Engine, EngineOptions } from "../../src/engine/engine.js";
import { silentLogger } from "../../src/engine/logger.js";
import { isCairnError } from "../../src/core/errors.js";
import { waitFor } from "../../src/testing/wait-for.js";
import { deferred, onCleanup, tempDir } from "./engines.js";
import { spawnWorker } from "./processes.js";
// @ts-expect-error plain JS fixture
import { queues as fixtureQueues, workflows as fixtureWorkflows } from "../fixtures/flow-workflows.mjs";

const run = promisify(execFile);

/** Most at once, per key and in all, replaying a ledger of "enter <runId> <key>" / "exit <runId> <key>" lines in order. */
export function maxSimultaneous(lines: readonly string[]): { total: number; perKey: number; enters: number } {
  const byKey = new Map<string, number>();
  let now = 0;
  let total = 0;
  let perKey = 0;
  let enters = 0;
  for (const line of lines) {
    const [what, , key] = line.split(" ");
    const delta = what === "enter" ? 1 : -1;
    if (delta === 1) enters++;
    now += delta;
    const held = (byKey.get(key!) ?? 0) + delta;
    byKey.set(key!, held);
    total = Math.max(total, now);
    perKey = Math.max(perKey, held);
  }
  return { total, perKey, enters };
}

async function expectInvalid(action: () => unknown, ...words: string[]): Promise<void> {
  try {
    await action();
  } catch (error) {
    expect(isCairnError(error) && error.code).toBe("INVALID_INPUT");
    for (const word of words) expect((error as Error).message).toContain(word);
    return;
  }
  throw new Error(`expected a validation error mentioning ${words.join(", ")}`);
}

/** Registers the flow-control tests; `url()` gives a fresh store URL for one test, shared by every process of it. */
export function flowSuite(url: () => Promise<string>): void {
  async function engineOn(store: string, options: EngineOptions): Promise<Engine> {
    const engine = await createEngine({ store, logger: silentLogger, ...options });
    onCleanup(() => engine.close());
    return engine;
  }

  it("under load from 3 worker processes, a queue never runs more than its concurrency, nor a key more than perKeyConcurrency", async () => {
    const store = await url();
    const ledger = join(tempDir(), "ledger.txt");
    const engine = await engineOn(store, { workflows: fixtureWorkflows, queues: fixtureQueues });
    // Skewed keys: three runs in four share one hot key, so its 2 slots are always contested (round-robin
    // keys over 4 slots would never put 3 runs of one key together, enforced or not).
    const runs = Array.from({ length: 48 }, (_, n) => ({ runId: `load-${n}`, key: n % 4 === 3 ? `k${n % 3}` : "hot" }));
    for (const { runId, key } of runs) await engine.start("flow-job", { key, ms: 8 + (runId.length % 3) * 4 }, { runId, concurrencyKey: key });
    const env = {
      CAIRN_TEST_STORE: store,
      CAIRN_TEST_WORKFLOWS: resolve("test/fixtures/flow-workflows.mjs"),
      CAIRN_TEST_LEDGER: ledger,
      CAIRN_TEST_CONCURRENCY: "8",
    };
    const script = resolve("test/fixtures/flow-worker.mjs");
    const workers = [spawnWorker(env, script), spawnWorker(env, script), spawnWorker(env, script)];
    await Promise.all(workers.map((w) => w.ready));
    for (const { runId, key } of runs) expect(await engine.result(runId, { timeoutMs: 90_000 })).toBe(key);
    for (const w of workers) w.child.kill("SIGTERM");
    await Promise.all(workers.map((w) => w.exited));

    const lines = readFileSync(ledger, "utf8").trim().split("\n");
    const seen = maxSimultaneous(lines);
    expect(seen.enters).toBe(runs.length * 2); // every step ran once
    expect(seen.total).toBeLessThanOrEqual(4);
    expect(seen.perKey, "the per-key limit was reached and never exceeded").toBe(2);
    expect(seen.total, "the limit was reached, so the test exercised it").toBeGreaterThan(1);
    const claimers = new Set<string>();
    for (const { runId } of runs) {
      for (const entry of await engine.journal(runId)) if (entry.kind === "run.claimed") claimers.add((entry.data as { workerId: string }).workerId);
    }
    expect(claimers.size, "more than one process claimed").toBeGreaterThan(1);
  });

  it("a run waiting for an event frees its slot: in a queue of concurrency 1 a second run proceeds", async () => {
    const store = await url();
    const waiter = defineWorkflow({
      name: "waiter",
      queue: "one",
      async run(ctx) {
        return ctx.waitForEvent<string>("go");
      },
    });
    const quick = defineWorkflow({ name: "quick", queue: "one", run: async (ctx) => ctx.step("work", () => "done") });
    const engine = await engineOn(store, { workflows: [waiter, quick], queues: { one: { concurrency: 1 } } });
    engine.startWorker({ concurrency: 4, pollInterval: 5 });
    const waiting = await engine.start(waiter, undefined);
    await waitFor(async () => (await waiting.info()).status === "suspended", { timeoutMs: 10_000, what: "the waiter to suspend" });
    expect(await (await engine.start(quick, undefined)).result({ timeoutMs: 10_000 })).toBe("done");
    await engine.sendEvent(waiting.runId, "go", "hello");
    expect(await waiting.result({ timeoutMs: 10_000 })).toBe("hello");
  });

  it("a woken run waits for a slot: it does not resume while the queue is full", async () => {
    const store = await url();
    const release = deferred<string>();
    const blocker = defineWorkflow({ name: "blocker", queue: "one", run: async (ctx) => ctx.step("hold", () => release.promise) });
    // What the blocker's row said when the sleeper resumed: read in the store, not from clocks.
    let blockerId = "";
    const seenOnResume: string[] = [];
    const sleeper = defineWorkflow({
      name: "sleeper",
      queue: "one",
      async run(ctx) {
        await ctx.sleep("nap", 1500);
        return ctx.step("after", async () => {
          seenOnResume.push((await engine.getRun(blockerId)).status);
          return "woke";
        });
      },
    });
    const engine = await engineOn(store, { workflows: [blocker, sleeper], queues: { one: { concurrency: 1 } } });
    engine.startWorker({ concurrency: 4, pollInterval: 5 });
    const sleeping = await engine.start(sleeper, undefined);
    await waitFor(async () => (await sleeping.info()).status === "suspended", { timeoutMs: 10_000, what: "the sleeper to suspend" });
    const blocking = await engine.start(blocker, undefined);
    blockerId = blocking.runId;
    await waitFor(async () => (await engine.journal(blocking.runId)).some((e) => e.kind === "step.started"), {
      timeoutMs: 10_000,
      what: "the blocker to hold the slot",
    });
    // The sleeper falls due while the blocker holds the only slot: it must stay suspended through
    // many claim cycles (poll interval 5ms) after its wake-up time.
    const due = (await sleeping.info()).wakeAt!.getTime();
    while (Date.now() < due + 300) {
      await new Promise((r) => setTimeout(r, 20));
      expect((await sleeping.info()).status).toBe("suspended");
    }
    release.resolve("released");
    expect(await sleeping.result({ timeoutMs: 10_000 })).toBe("woke");
    // Resumed only once the blocker's completion had freed the slot. (Journal stamps cannot say so:
    // on PostgreSQL a claim's stamp is its transaction's start, which on a loaded machine can precede
    // a completion that committed before the claim's queue count read it.)
    expect(seenOnResume).toEqual(["completed"]);
  });

  it("starts at most rateLimit.limit runs in any window of rateLimit.per (read back from journal timestamps)", async () => {
    const store = await url();
    const tick = defineWorkflow({ name: "tick", queue: "rl", run: async (ctx) => ctx.step("t", () => 1) });
    const engine = await engineOn(store, { workflows: [tick], queues: { rl: { rateLimit: { limit: 3, per: "300ms" } } } });
    const handles = [];
    for (let i = 0; i < 10; i++) handles.push(await engine.start(tick, undefined));
    engine.startWorker({ concurrency: 16, pollInterval: 5 });
    for (const handle of handles) await handle.result({ timeoutMs: 20_000 });
    const starts: number[] = [];
    for (const handle of handles) {
      const claimed = (await engine.journal(handle.runId)).find((e) => e.kind === "run.claimed")!;
      starts.push(claimed.at.getTime());
    }
    starts.sort((a, b) => a - b);
    for (const [i, t] of starts.entries()) {
      const inWindow = starts.filter((s) => s >= t && s < t + 300).length;
      expect(inWindow, `starts in [${t - starts[0]!}, +300ms) (start ${i})`).toBeLessThanOrEqual(3);
    }
    expect(starts.at(-1)! - starts[0]!).toBeGreaterThanOrEqual(900);
  });

  it("claims higher priorities first, FIFO within a priority", async () => {
    const store = await url();
    const order: string[] = [];
    const job = defineWorkflow({ name: "prio", queue: "p", run: async (ctx, label: string) => ctx.step("record", () => void order.push(label)) });
    const engine = await engineOn(store, { workflows: [job], queues: { p: { concurrency: 1 } } });
    const plan: [string, number | undefined][] = [
      ["low-a", undefined],
      ["high-a", 10],
      ["mid", 5],
      ["high-b", 10],
      ["low-b", 0],
      ["neg", -5],
    ];
    const handles = [];
    for (const [label, priority] of plan) handles.push(await engine.start(job, label, priority === undefined ? {} : { priority }));
    engine.startWorker({ concurrency: 4, pollInterval: 5 });
    for (const handle of handles) await handle.result({ timeoutMs: 10_000 });
    expect(order).toEqual(["high-a", "high-b", "mid", "low-a", "low-b", "neg"]);
  });

  it("keeps FIFO among runs created in one commit (the same millisecond): twelve children queue in the order they were started", async () => {
    const store = await url();
    const order: number[] = [];
    const job = defineWorkflow({ name: "fifo-job", queue: "f", run: async (ctx, n: number) => ctx.step("record", () => void order.push(n)) });
    const fan = defineWorkflow({
      name: "fifo-fan",
      run: async (ctx) => Promise.all(Array.from({ length: 12 }, (_, n) => ctx.child(job, n))),
    });
    const engine = await engineOn(store, { workflows: [job, fan], queues: { f: { concurrency: 1 } } });
    const run = await engine.start(fan, null, { runId: "fan" });
    engine.startWorker({ concurrency: 4, pollInterval: 5 });
    await run.result({ timeoutMs: 10_000 });
    const created = await Promise.all(Array.from({ length: 12 }, async (_, n) => (await engine.getRun(`fan/fifo-job#${n}`)).createdAt.getTime()));
    // The scheduler commits the starts in one or a few batches: children share creation times, and only insertion order orders them.
    expect(new Set(created).size).toBeLessThan(6);
    // Ordered by run id, "fan/fifo-job#10" would come before "fan/fifo-job#2".
    expect(order).toEqual(Array.from({ length: 12 }, (_, n) => n));
  });

  it("debounce coalesces starts with one key into one run that starts after a quiet period, with the last input", async () => {
    const store = await url();
    const echo = defineWorkflow({ name: "echo", run: async (ctx, input: number) => ctx.step("echo", () => input) });
    const engine = await engineOn(store, { workflows: [echo] });
    engine.startWorker({ concurrency: 4, pollInterval: 5 });
    const handles = [];
    for (let n = 1; n <= 5; n++) handles.push(await engine.start(echo, n, { debounce: { key: "doc-1", period: "400ms" } }));
    expect(handles.map((h) => h.created)).toEqual([true, false, false, false, false]);
    expect(new Set(handles.map((h) => h.runId)).size).toBe(1);
    expect(await handles[0]!.result({ timeoutMs: 10_000 })).toBe(5);
    const journal = await engine.journal(handles[0]!.runId);
    const lastStart = journal.filter((e) => e.kind === "run.debounced").at(-1)!;
    const claimed = journal.find((e) => e.kind === "run.claimed")!;
    // The quiet period runs from the caller's clock as it started the run; on PostgreSQL the stamps are
    // the database's, read a moment later (1 ms has been seen on a loaded machine). Starting early by
    // the period would be 400 ms off.
    expect(claimed.at.getTime()).toBeGreaterThanOrEqual(lastStart.at.getTime() + 400 - 20);
    expect((await engine.listRuns({ workflow: "echo" })).runs).toHaveLength(1);
    const later = await engine.start(echo, 6, { debounce: { key: "doc-1", period: 1 } });
    expect(later.created).toBe(true);
    expect(await later.result({ timeoutMs: 10_000 })).toBe(6);
    await expectInvalid(() => engine.start(echo, 7, { runId: "x", debounce: { key: "k", period: 10 } }), "runId and debounce");
    await expectInvalid(() => engine.start(echo, 7, { debounce: { key: "", period: 10 } }), "debounce: key");
    await expectInvalid(() => engine.start(echo, 7, { debounce: { key: "k", period: "soon" as never } }), "debounce: period");
  });

  it("queue state: engine.listQueues() and `cairn queues` show running, waiting and suspended runs per queue and key", async () => {
    const store = await url();
    const release = deferred<number>();
    const hold = defineWorkflow({ name: "hold", queue: "jobs", run: async (ctx) => ctx.step("hold", () => release.promise) });
    const nap = defineWorkflow({ name: "nap", queue: "jobs", run: async (ctx) => ctx.waitForEvent("never") });
    const engine = await engineOn(store, { workflows: [hold, nap], queues: { jobs: { concurrency: 1 }, idle: { concurrency: 3 } } });
    onCleanup(() => release.resolve(0)); // registered after the engine's close, so it runs first
    const napping = await engine.start(nap, undefined, { concurrencyKey: "b" });
    const worker = engine.startWorker({ concurrency: 4, pollInterval: 5 });
    await waitFor(async () => (await napping.info()).status === "suspended", { timeoutMs: 10_000, what: "the napper to suspend" });
    const holding = await engine.start(hold, undefined, { concurrencyKey: "a" });
    await waitFor(async () => (await holding.info()).status === "running", { timeoutMs: 10_000, what: "the holder to run" });
    await engine.start(hold, undefined, { concurrencyKey: "a" });
    await engine.start(hold, undefined);
    const states = await engine.listQueues();
    // The deprecated name answers the same.
    expect(await engine.queueStates()).toEqual(states);
    expect(states.map((s) => [s.name, s.running, s.waiting, s.suspended])).toEqual([
      ["idle", 0, 0, 0],
      ["jobs", 1, 2, 1],
    ]);
    expect(states[1]!.limits).toMatchObject({ name: "jobs", concurrency: 1 });
    expect(states[1]!.keys.map((k) => [k.concurrencyKey, k.running, k.waiting, k.suspended])).toEqual([
      [null, 0, 1, 0],
      ["a", 1, 1, 0],
      ["b", 0, 0, 1],
    ]);
    const cli = (...args: string[]) => run(process.execPath, [resolve("dist/src/cli/main.js"), "queues", "--store", store, ...args]);
    const listed = JSON.parse((await cli("--json")).stdout) as { name: string; running: number; waiting: number; limits: unknown }[];
    expect(listed.map((s) => [s.name, s.running, s.waiting, s.limits])).toEqual([["jobs", 1, 2, null]]);
    expect((await cli("--keys")).stdout).toMatch(/^jobs\s+a\s+1\s+1\s+0$/m);
    release.resolve(1);
    await worker.stop({ drain: true });
  });

  it("rejects bad queue configuration and options with a validation error naming the problem", async () => {
    const store = await url();
    await expectInvalid(() => engineOn(store, { queues: { jobs: { concurrency: 0 } } }), "jobs.concurrency");
    await expectInvalid(() => engineOn(store, { queues: { jobs: { concurency: 2 } as never } }), "concurency");
    await expectInvalid(() => engineOn(store, { queues: { "bad name": {} } }), "bad name");
    await expectInvalid(() => engineOn(store, { queues: { jobs: { rateLimit: { limit: 5, per: "fast" as never } } } }), "rateLimit.per");
    const orphan = defineWorkflow({ name: "orphan", queue: "nowhere", run: async () => 1 });
    await expectInvalid(() => engineOn(store, { workflows: [orphan] }), "nowhere", "not declared");
    expect(() => defineWorkflow({ name: "x", queue: "", run: async () => 1 })).toThrow(/queue/);
    const plain = defineWorkflow({ name: "plain", run: async () => 1 });
    const engine = await engineOn(store, { workflows: [plain], queues: { jobs: { concurrency: 2 } } });
    await expectInvalid(() => engine.start(plain, undefined, { queue: "nope" }), "unknown queue", "nope");
    await expectInvalid(() => engine.start(plain, undefined, { concurrencyKey: "c1" }), "need a queue");
    await expectInvalid(() => engine.start(plain, undefined, { queue: "jobs", priority: 1.5 }), "priority");
    await expectInvalid(() => engine.start(plain, undefined, { queue: "jobs", concurrencyKey: "" }), "concurrencyKey");
    expect((await engine.listRuns({})).runs).toEqual([]); // nothing half-written
  });
}
