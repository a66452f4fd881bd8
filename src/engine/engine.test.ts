import { describe, expect, it } from "vitest";
import { deferred, STORE_KINDS, testEngine } from "../../test/support/engines.js";
import { isCairnError, RunConflictError, RunFinishedError, RunNotFoundError, ValidationError } from "../core/errors.js";
import { waitFor } from "../testing/wait-for.js";
import { defineWorkflow } from "./define-workflow.js";

const fast = { pollInterval: 10 };

describe.each(STORE_KINDS)("engine on %s", (kind) => {
  it("runs steps in order, journals intent before effect and returns the output", async () => {
    const calls: string[] = [];
    const wf = defineWorkflow({
      name: "basic",
      async run(ctx, input: { n: number }) {
        const a = await ctx.step("double", () => (calls.push("double"), input.n * 2));
        const b = await ctx.step("inc", ({ idempotencyKey, attempt }) => (calls.push(`inc:${idempotencyKey}:${attempt}`), a + 1));
        return { a, b, when: ctx.now() instanceof Date, r: typeof ctx.random(), id: ctx.uuid().length };
      },
    });
    const engine = await testEngine(kind, { workflows: [wf] });
    const run = await engine.start(wf, { n: 20 }, { runId: "r1" });
    engine.startWorker(fast);
    expect(await run.result({ timeoutMs: 5000 })).toEqual({ a: 40, b: 41, when: true, r: "number", id: 36 });
    expect(calls).toEqual(["double", "inc:r1:inc#0:1"]);
    const kinds = (await engine.journal("r1")).map((e) => `${e.kind}${e.opKey ? ` ${e.opKey}` : ""}`);
    expect(kinds).toEqual([
      "run.created",
      "run.claimed",
      "step.started double#0",
      "step.completed double#0",
      "step.started inc#0",
      "step.completed inc#0",
      "value.recorded now#0",
      "value.recorded random#0",
      "value.recorded uuid#0",
      "run.completed",
    ]);
    const info = await engine.getRun("r1");
    expect(info.status).toBe("completed");
    expect(info.output).toEqual({ a: 40, b: 41, when: true, r: "number", id: 36 });
  });

  it("a sequential step costs one commit: each outcome shares its transaction with the next intent", async () => {
    const wf = defineWorkflow({
      name: "sequential",
      async run(ctx) {
        let x = 0;
        for (let i = 0; i < 20; i++) x = await ctx.step("inc", () => x + 1);
        return x;
      },
    });
    const engine = await testEngine(kind, { workflows: [wf] });
    let commits = 0;
    const commit = engine.store.commit.bind(engine.store);
    engine.store.commit = (writes, now) => ((commits += 1), commit(writes, now));
    const run = await engine.start(wf, undefined, { runId: "seq" });
    engine.startWorker(fast);
    expect(await run.result({ timeoutMs: 5000 })).toBe(20);
    // 20 intents + 20 outcomes + completion in 21 transactions: intent 1 alone, then outcome k with intent k+1, then outcome 20 with the completion.
    expect(commits).toBe(21);
    const journal = await engine.journal("seq");
    expect(journal.filter((e) => e.kind === "step.started")).toHaveLength(20);
  });

  it("start is idempotent by runId and refuses a different input or workflow", async () => {
    const wf = defineWorkflow({ name: "idem", run: async (_ctx, input: { x: number }) => input.x });
    const other = defineWorkflow({ name: "other", run: async () => 0 });
    const engine = await testEngine(kind, { workflows: [wf, other] });
    const first = await engine.start(wf, { x: 1 }, { runId: "same" });
    const second = await engine.start(wf, { x: 1 }, { runId: "same" });
    expect(first.created).toBe(true);
    expect(second.created).toBe(false);
    await expect(engine.start(wf, { x: 2 }, { runId: "same" })).rejects.toBeInstanceOf(RunConflictError);
    await expect(engine.start(other, undefined, { runId: "same" })).rejects.toThrow(/workflow "idem"/);
    expect((await engine.journal("same")).length).toBe(1);
  });

  it("starts issued together share store transactions and keep start's semantics", async () => {
    const wf = defineWorkflow({ name: "together", run: async (_ctx, input: { x: number }) => input.x });
    const engine = await testEngine(kind, { workflows: [wf] });
    const batches: number[] = [];
    const createRuns = engine.store.createRuns.bind(engine.store);
    engine.store.createRuns = (runs, now) => (batches.push(runs.length), createRuns(runs, now));
    const starts = [
      engine.start(wf, { x: 0 }, { runId: "t0" }),
      ...Array.from({ length: 10 }, (_, i) => engine.start(wf, { x: i }, { runId: `t${i}` })),
      engine.start(wf, { x: 99 }, { runId: "t1" }),
    ];
    const settled = await Promise.allSettled(starts);
    expect(settled.map((s) => (s.status === "fulfilled" ? s.value.created : "conflict"))).toEqual([true, false, ...Array(9).fill(true), "conflict"]);
    expect((settled[11] as PromiseRejectedResult).reason).toBeInstanceOf(RunConflictError);
    // The first start goes to the store at once; the eleven issued meanwhile go together.
    expect(batches).toEqual([11]);
    engine.startWorker(fast);
    for (let i = 0; i < 10; i++) expect(await engine.result(`t${i}`, { timeoutMs: 5000 })).toBe(i);
  });

  it("a run started while a worker has a free slot is created already claimed by it; a full worker leaves it pending", async () => {
    const gate = deferred();
    const wf = defineWorkflow({
      name: "slot",
      run: async (ctx, input: { wait: boolean }) => ctx.step("s", async () => (input.wait ? (await gate.promise, "waited") : "quick")),
    });
    const engine = await testEngine(kind, { workflows: [wf] });
    const worker = engine.startWorker({ ...fast, concurrency: 1 });
    const claims: string[] = [];
    const createRuns = engine.store.createRuns.bind(engine.store);
    engine.store.createRuns = (runs, now) => (claims.push(...runs.map((r) => `${r.runId}:${r.claimFor?.workerId ?? "-"}`)), createRuns(runs, now));
    const createRun = engine.store.createRun.bind(engine.store);
    engine.store.createRun = (run, now) => (claims.push(`${run.runId}:${run.claimFor?.workerId ?? "-"}`), createRun(run, now));
    await engine.start(wf, { wait: true }, { runId: "first" });
    expect((await engine.getRun("first")).leaseOwner).toBe(worker.workerId);
    const kinds = (await engine.journal("first")).map((e) => e.kind);
    expect(kinds.slice(0, 2)).toEqual(["run.created", "run.claimed"]);
    await engine.start(wf, { wait: false }, { runId: "second" });
    expect(claims).toEqual([`first:${worker.workerId}`, "second:-"]);
    expect((await engine.getRun("second")).status).toBe("pending");
    gate.resolve();
    expect(await engine.result("first", { timeoutMs: 5000 })).toBe("waited");
    expect(await engine.result("second", { timeoutMs: 5000 })).toBe("quick");
    expect((await engine.journal("second")).map((e) => e.kind).slice(0, 2)).toEqual(["run.created", "run.claimed"]);
  });

  it("a worker stopping while a run is being created claimed for it waits for the run, then gives it back", async () => {
    const wf = defineWorkflow({ name: "handover", run: async (ctx) => ctx.step("s", () => "done") });
    const engine = await testEngine(kind, { workflows: [wf] });
    const worker = engine.startWorker(fast);
    const hold = deferred();
    const createRun = engine.store.createRun.bind(engine.store);
    engine.store.createRun = async (run, now) => (await hold.promise, createRun(run, now));
    const started = engine.start(wf, undefined, { runId: "r" });
    let stopped = false;
    const stopping = worker.stop({ drain: true }).then(() => (stopped = true));
    for (let i = 0; i < 10; i++) await new Promise((resolve) => setImmediate(resolve));
    expect(stopped).toBe(false);
    hold.resolve();
    await started;
    await stopping;
    const info = await engine.getRun("r");
    expect(info.leaseOwner).toBeNull();
    expect(info.status).not.toBe("completed");
    engine.startWorker(fast);
    expect(await engine.result("r", { timeoutMs: 5000 })).toBe("done");
  });

  it("sleeps durably: the run suspends, holds no lease, and wakes when due", async () => {
    let now = Date.UTC(2030, 0, 1);
    const wf = defineWorkflow({
      name: "sleeper",
      async run(ctx) {
        await ctx.sleep("nap", "2h");
        return ctx.step("after", () => "woke");
      },
    });
    const engine = await testEngine(kind, { workflows: [wf], clock: () => now });
    const run = await engine.start(wf, undefined, { runId: "s1" });
    engine.startWorker(fast);
    const suspended = await waitFor(async () => {
      const info = await engine.getRun("s1");
      return info.status === "suspended" && info;
    });
    expect(suspended.leaseOwner).toBeNull();
    expect(suspended.wakeAt?.getTime()).toBe(now + 2 * 3600_000);
    expect(suspended.waitingFor).toEqual([{ kind: "timer", opKey: "nap#0", wakeAt: now + 2 * 3600_000 }]);
    now += 2 * 3600_000;
    expect(await run.result({ timeoutMs: 5000 })).toBe("woke");
    const kinds = (await engine.journal("s1")).map((e) => e.kind);
    expect(kinds.filter((k) => k === "sleep.completed")).toHaveLength(1);
    expect(kinds).toContain("run.suspended");
  });

  it("delivers events sent before, during and twice, exactly once by eventId, and times out", async () => {
    let now = Date.UTC(2030, 0, 1);
    const wf = defineWorkflow({
      name: "events",
      async run(ctx) {
        const early = await ctx.waitForEvent<number>("early");
        const late = await ctx.waitForEvent<number>("late");
        let timedOut = false;
        try {
          await ctx.waitForEvent("never", { timeout: "1h" });
        } catch (error) {
          timedOut = isCairnError(error, "TIMEOUT");
        }
        return { early, late, timedOut };
      },
    });
    const engine = await testEngine(kind, { workflows: [wf], clock: () => now });
    await engine.start(wf, undefined, { runId: "e1" });
    expect(await engine.sendEvent("e1", "early", 1, { eventId: "a" })).toEqual({ eventId: "a", duplicate: false });
    expect(await engine.sendEvent("e1", "early", 99, { eventId: "a" })).toEqual({ eventId: "a", duplicate: true });
    engine.startWorker(fast);
    await waitFor(async () => (await engine.getRun("e1")).waitingFor.some((w) => w.kind === "event" && w.type === "late"));
    await engine.sendEvent("e1", "late", 2, { eventId: "b" });
    await engine.sendEvent("e1", "late", 3, { eventId: "b" });
    await waitFor(async () => (await engine.getRun("e1")).waitingFor.some((w) => w.kind === "event" && w.type === "never"));
    now += 3600_000;
    expect(await engine.result("e1", { timeoutMs: 5000 })).toEqual({ early: 1, late: 2, timedOut: true });
    await expect(engine.sendEvent("e1", "late", 4)).rejects.toBeInstanceOf(RunFinishedError);
    await expect(engine.sendEvent("nope", "late", 4)).rejects.toBeInstanceOf(RunNotFoundError);
    const received = (await engine.journal("e1")).filter((e) => e.kind === "event.received");
    expect(received.map((e) => (e.data as { eventId: string }).eventId)).toEqual(["a", "b"]);
  });

  it("an event sent after a wait timed out is kept for the next wait of that type", async () => {
    let now = Date.UTC(2030, 0, 1);
    const wf = defineWorkflow({
      name: "late-event",
      async run(ctx) {
        const first = await ctx.waitForEvent("ping", { timeout: "1h" }).catch((error: unknown) => (isCairnError(error, "TIMEOUT") ? "timed out" : "other"));
        await ctx.step("between", () => "x");
        const second = await ctx.waitForEvent<string>("ping");
        return { first, second };
      },
    });
    const engine = await testEngine(kind, { workflows: [wf], clock: () => now });
    await engine.start(wf, undefined, { runId: "late" });
    engine.startWorker(fast);
    await waitFor(async () => (await engine.getRun("late")).status === "suspended");
    now += 3600_000;
    await waitFor(async () => (await engine.journal("late")).some((e) => e.kind === "event.timedout"));
    await engine.sendEvent("late", "ping", "pong", { eventId: "p1" });
    expect(await engine.result("late", { timeoutMs: 5000 })).toEqual({ first: "timed out", second: "pong" });
    const received = (await engine.journal("late")).filter((e) => e.kind === "event.received");
    expect(received.map((e) => e.opKey)).toEqual(["ping#1"]);
  });

  it("runs a child workflow and hands its result or error to the parent", async () => {
    const child = defineWorkflow({
      name: "child",
      async run(ctx, input: { fail: boolean }) {
        return ctx.step(
          "work",
          () => {
            if (input.fail) throw new Error("child broke");
            return "child-ok";
          },
          { retry: { maxAttempts: 1 } },
        );
      },
    });
    const parent = defineWorkflow({
      name: "parent",
      async run(ctx) {
        const ok = await ctx.child(child, { fail: false });
        const failed = await ctx.child(child, { fail: true }).catch((error: Error) => `caught: ${error.message}`);
        return { ok, failed };
      },
    });
    const engine = await testEngine(kind, { workflows: [parent, child] });
    engine.startWorker(fast);
    const run = await engine.start(parent, undefined, { runId: "p1" });
    const result = (await run.result({ timeoutMs: 5000 })) as { ok: string; failed: string };
    expect(result.ok).toBe("child-ok");
    expect(result.failed).toMatch(/caught: .*child broke/);
    const children = await engine.listRuns({ workflow: "child" });
    expect(children.runs.map((r) => [r.runId, r.parentRunId, r.status]).sort()).toEqual([
      ["p1/child#0", "p1", "completed"],
      ["p1/child#1", "p1", "failed"],
    ]);
  });

  it("cancel aborts the running step's signal and ends the run cancelled", async () => {
    const aborted = deferred<string>();
    const started = deferred();
    const wf = defineWorkflow({
      name: "cancellable",
      async run(ctx) {
        await ctx.step("long", ({ signal }) => {
          started.resolve();
          return new Promise((_, reject) => signal.addEventListener("abort", () => (aborted.resolve("aborted"), reject(new Error("aborted")))));
        });
      },
    });
    const engine = await testEngine(kind, { workflows: [wf] });
    engine.startWorker(fast);
    const run = await engine.start(wf, undefined, { runId: "c1" });
    await started.promise;
    const info = await engine.cancel("c1", "operator said so");
    expect(info.status).toBe("cancelled");
    expect(await aborted.promise).toBe("aborted");
    await expect(run.result()).rejects.toThrow(/cancelled: operator said so/);
    await expect(engine.cancel("c1")).rejects.toBeInstanceOf(RunFinishedError);
    const kinds = (await engine.journal("c1")).map((e) => e.kind);
    expect(kinds.at(-1)).toBe("run.cancelled");
    expect(kinds).not.toContain("step.completed");
  });

  it("retry resumes a failed run: completed steps are not run again, the failed one is", async () => {
    let failNext = true;
    const counts = { a: 0, b: 0 };
    const wf = defineWorkflow({
      name: "flaky",
      async run(ctx) {
        await ctx.step("a", () => ++counts.a);
        return ctx.step(
          "b",
          () => {
            counts.b += 1;
            if (failNext) throw new Error("b is down");
            return "b-ok";
          },
          { retry: { maxAttempts: 2, initialDelay: 1 } },
        );
      },
    });
    const engine = await testEngine(kind, { workflows: [wf] });
    engine.startWorker(fast);
    const run = await engine.start(wf, undefined, { runId: "f1" });
    await expect(run.result({ timeoutMs: 5000 })).rejects.toThrow(/b is down/);
    expect(counts).toEqual({ a: 1, b: 2 });
    failNext = false;
    const retried = await engine.retry("f1");
    expect(retried.status).toBe("pending");
    expect(await run.result({ timeoutMs: 5000 })).toBe("b-ok");
    expect(counts).toEqual({ a: 1, b: 3 });
    await expect(engine.retry("f1")).rejects.toThrow(/only failed or dead runs can be retried/);
  });

  it("lists runs with filters and pagination, and rejects bad input with clear errors", async () => {
    const wf = defineWorkflow({ name: "noop", run: async () => 1 });
    const engine = await testEngine(kind, { workflows: [wf] });
    for (let i = 0; i < 5; i++) await engine.start(wf, i, { runId: `n${i}` });
    const first = await engine.listRuns({ limit: 2, status: "pending" });
    expect(first.runs).toHaveLength(2);
    expect(first.nextCursor).toBeTruthy();
    const rest = await engine.listRuns({ limit: 10, cursor: first.nextCursor });
    expect(new Set([...first.runs, ...rest.runs].map((r) => r.runId))).toEqual(new Set(["n0", "n1", "n2", "n3", "n4"]));
    await expect(engine.listRuns({ status: "bogus" as never })).rejects.toBeInstanceOf(ValidationError);
    await expect(engine.start("missing", {})).rejects.toThrow(/not registered.*noop/);
    await expect(engine.start(wf, 1, { runId: "has space" })).rejects.toThrow(/runId: must not contain whitespace/);
    await expect(engine.getRun("unknown")).rejects.toBeInstanceOf(RunNotFoundError);
    await expect(engine.sendEvent("n0", "")).rejects.toThrow(/type/);
  });

  it("fails a step whose result exceeds the payload limit instead of bloating the journal", async () => {
    const wf = defineWorkflow({
      name: "big",
      async run(ctx) {
        return ctx.step("huge", () => "x".repeat(2000));
      },
    });
    const engine = await testEngine(kind, { workflows: [wf], maxPayloadBytes: 1000 });
    engine.startWorker(fast);
    const run = await engine.start(wf, undefined, { runId: "big1" });
    await expect(run.result({ timeoutMs: 5000 })).rejects.toThrow(/over the 1000-byte limit/);
    const journal = await engine.journal("big1");
    expect(journal.filter((e) => e.kind === "step.started")).toHaveLength(1);
    expect(journal.every((e) => JSON.stringify(e.data).length < 2000)).toBe(true);
  });

  it("only claims runs whose pinned version is registered", async () => {
    const v1 = defineWorkflow({ name: "pinned", version: "1", run: async () => "v1" });
    const v2 = defineWorkflow({ name: "pinned", version: "2", run: async () => "v2" });
    const engine = await testEngine(kind, { workflows: [v2] });
    await engine.start(v1, undefined, { runId: "old" });
    await engine.start(v2, undefined, { runId: "new" });
    engine.startWorker(fast);
    expect(await engine.result("new", { timeoutMs: 5000 })).toBe("v2");
    const old = await engine.getRun("old");
    expect(old.status).toBe("pending");
    expect(old.version).toBe("1");
  });
});
