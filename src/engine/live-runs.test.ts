/**
 * Live runs on the memory and SQLite stores: published values read without waking the run, requests
 * answered by `ctx.handle` (idempotent by request id), tags (validated, filtered, inherited), continue
 * as new (chain followed by result()), delayed starts and deadlines driven by an injectable clock.
 */
import { describe, expect, it } from "vitest";
import { STORE_KINDS, testEngine } from "../../test/support/engines.js";
import { isCairnError } from "../core/errors.js";
import { ManualClock } from "../testing/manual-clock.js";
import { waitFor } from "../testing/wait-for.js";
import { defineWorkflow } from "./define-workflow.js";

const fast = { pollInterval: 10 };

describe.each(STORE_KINDS)("live runs on %s", (kind) => {
  it("publishes values clients read from the store without waking the run; replay does not publish again", async () => {
    const progress = defineWorkflow({
      name: "progress",
      async run(ctx) {
        for (let i = 1; i <= 3; i++) await ctx.publish("progress", { done: i, of: 3 });
        await ctx.publish("phase", "waiting");
        await ctx.waitForEvent("go");
        await ctx.publish("phase", "done");
        return "ok";
      },
    });
    const engine = await testEngine(kind, { workflows: [progress] });
    await engine.start(progress, null, { runId: "p1" });
    expect(await engine.getPublished("p1", "progress")).toBeUndefined();
    const worker = engine.startWorker(fast);
    await waitFor(async () => (await engine.getRun("p1")).status === "suspended", { what: "the run to suspend" });
    const before = await engine.getRun("p1");
    const read = await engine.getPublished<{ done: number }>("p1", "progress");
    expect(read?.value).toEqual({ done: 3, of: 3 });
    expect((await engine.getPublished("p1", "phase"))?.value).toBe("waiting");
    // Reading did not touch the run: same status, same journal length, same epoch.
    const after = await engine.getRun("p1");
    expect([after.status, after.entries, after.leaseEpoch]).toEqual([before.status, before.entries, before.leaseEpoch]);
    await engine.sendEvent("p1", "go", null);
    expect(await engine.handle("p1").result({ timeoutMs: 5000 })).toBe("ok");
    expect((await engine.getPublished("p1", "phase"))?.value).toBe("done");
    const publishes = (await engine.journal("p1")).filter((e) => e.kind === "publish.value").map((e) => e.opKey);
    expect(publishes).toEqual(["publish:progress#0", "publish:progress#1", "publish:progress#2", "publish:phase#0", "publish:phase#1"]);
    await expect(engine.getPublished("nope", "progress")).rejects.toMatchObject({ code: "RUN_NOT_FOUND" });
    await expect(engine.getPublished("p1", "a/b")).rejects.toMatchObject({ code: "INVALID_INPUT" });
    await worker.stop();
  });

  it("answers requests through ctx.handle, once per request id, and replies with the handler's error", async () => {
    const applied: string[] = [];
    const agent = defineWorkflow({
      name: "steerable",
      async run(ctx, input: { topic: string }) {
        let topic = input.topic;
        ctx.handle("steer", async (payload) => {
          const next = (payload as { topic?: unknown }).topic;
          if (typeof next !== "string") throw new Error("steer needs a topic");
          // The effect is a step: the ledger shows how often it really ran.
          await ctx.step("apply-steer", () => void applied.push(next));
          topic = next;
          return { ok: true, topic };
        });
        await ctx.waitForEvent("finish");
        return topic;
      },
    });
    const engine = await testEngine(kind, { workflows: [agent] });
    engine.startWorker(fast);
    await engine.start(agent, { topic: "lithium" }, { runId: "a1" });
    const reply = await engine.request("a1", "steer", { topic: "sodium" }, { requestId: "s1", timeoutMs: 5000 });
    expect(reply).toEqual({ ok: true, topic: "sodium" });
    // The same request id: the same reply, the handler does not run again.
    expect(await engine.request("a1", "steer", { topic: "ignored" }, { requestId: "s1", timeoutMs: 5000 })).toEqual({ ok: true, topic: "sodium" });
    const failed = await engine.request("a1", "steer", { nope: 1 }, { requestId: "s2", timeoutMs: 5000 }).catch((error: unknown) => error);
    expect(isCairnError(failed, "REQUEST_FAILED")).toBe(true);
    expect((failed as Error).message).toContain("steer needs a topic");
    const again = await engine.request("a1", "steer", { topic: "x" }, { requestId: "s2", timeoutMs: 5000 }).catch((error: unknown) => error);
    expect(isCairnError(again, "REQUEST_FAILED")).toBe(true);
    await engine.sendEvent("a1", "finish", null);
    expect(await engine.handle("a1").result({ timeoutMs: 5000 })).toBe("sodium");
    expect(applied).toEqual(["sodium"]);
    await expect(engine.request("a1", "steer", { topic: "late" }, { requestId: "s3", timeoutMs: 1000 })).rejects.toMatchObject({ code: "RUN_FINISHED" });
  });

  it("validates, stores, filters and inherits tags", async () => {
    const child = defineWorkflow({ name: "tag-child", run: async () => "c" });
    const parent = defineWorkflow({ name: "tag-parent", run: async (ctx, kid: string | null) => ctx.child(child, null, kid === null ? {} : { runId: kid }) });
    const engine = await testEngine(kind, { workflows: [parent, child] });
    await engine.start(parent, "kid", { runId: "t1", tags: { customer: "acme", tier: "gold" } });
    await engine.start(parent, null, { runId: "t2", tags: { customer: "globex" } });
    engine.startWorker(fast);
    await engine.handle("t1").result({ timeoutMs: 15_000 });
    expect((await engine.getRun("t1")).tags).toEqual({ customer: "acme", tier: "gold" });
    expect((await engine.getRun("kid")).tags).toEqual({ customer: "acme", tier: "gold" });
    const acme = await engine.listRuns({ tags: { customer: "acme" } });
    expect(acme.runs.map((r) => r.runId).sort()).toEqual(["kid", "t1"]);
    for (const bad of [
      { "": "x" },
      { customer: "a\u0007b" },
      { customer: "x".repeat(257) },
      Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, "v"])),
    ]) {
      await expect(engine.start(parent, null, { tags: bad })).rejects.toMatchObject({ code: "INVALID_INPUT" });
    }
    await expect(engine.listRuns({ tags: { "bad key": "x" } })).rejects.toMatchObject({ code: "INVALID_INPUT" });
  });

  it("fails a child op whose runId another run holds, naming the holder, instead of waiting for an end that never wakes it", async () => {
    const child = defineWorkflow({ name: "held", run: async (ctx) => ctx.waitForEvent("go") });
    const parent = defineWorkflow({
      name: "holder",
      run: async (ctx, kid: string) =>
        ctx.child(child, null, { runId: kid }).then(
          (value) => ({ value }),
          (error: unknown) => ({ code: (error as { code?: string }).code, message: (error as Error).message }),
        ),
    });
    const engine = await testEngine(kind, { workflows: [parent, child] });
    engine.startWorker(fast);
    await engine.start(child, null, { runId: "solo" });
    const first = await engine.start(parent, "shared", { runId: "p1" });
    await waitFor(async () => (await engine.getRun("shared").catch(() => null)) !== null, { what: "p1 to start its child" });
    const second = await engine.start(parent, "shared", { runId: "p2" });
    const third = await engine.start(parent, "solo", { runId: "p3" });
    expect(await second.result({ timeoutMs: 5000 })).toEqual({
      code: "RUN_CONFLICT",
      message: expect.stringContaining('Run "shared" already exists as the child of run "p1" (op "held#0")'),
    });
    expect(await third.result({ timeoutMs: 5000 })).toEqual({ code: "RUN_CONFLICT", message: expect.stringContaining("as a run of its own") });
    // The holder is untouched and still answers to its own parent.
    await engine.sendEvent("shared", "go", 7);
    expect(await first.result({ timeoutMs: 5000 })).toEqual({ value: 7 });
    expect((await engine.journal("p2")).map((entry) => entry.kind)).toContain("child.failed");
  });

  it("continues as new: the chain is linked both ways and result() follows it to the last run", async () => {
    const counter = defineWorkflow({
      name: "counter",
      async run(ctx, input: { n: number }) {
        const n = await ctx.step("inc", () => input.n + 1);
        if (n < 3) return ctx.continueAsNew({ n });
        return { final: n, runId: ctx.runId };
      },
    });
    const engine = await testEngine(kind, { workflows: [counter] });
    engine.startWorker(fast);
    const run = await engine.start(counter, { n: 0 }, { runId: "c", tags: { job: "count" } });
    expect(await run.result({ timeoutMs: 5000 })).toEqual({ final: 3, runId: "c~3" });
    const first = await engine.getRun("c");
    expect(first).toMatchObject({ status: "completed", continuedTo: "c~2" });
    expect(first.continuedFrom).toBeUndefined();
    expect(await engine.getRun("c~2")).toMatchObject({ status: "completed", continuedFrom: "c", continuedTo: "c~3", input: { n: 1 }, tags: { job: "count" } });
    expect(await engine.getRun("c~3")).toMatchObject({ status: "completed", continuedFrom: "c~2", input: { n: 2 } });
    // Each run's journal is short: the chain does not grow one history.
    expect((await engine.journal("c~3")).length).toBeLessThan(8);
  });

  it("events and requests sent to a run that continued as new reach the last run of its chain", async () => {
    const relay = defineWorkflow({
      name: "relay",
      async run(ctx, input: { n: number }) {
        ctx.handle("where", () => ctx.runId);
        if (input.n < 2) return ctx.continueAsNew({ n: input.n + 1 });
        return { got: await ctx.waitForEvent<string>("note"), runId: ctx.runId };
      },
    });
    const engine = await testEngine(kind, { workflows: [relay] });
    engine.startWorker(fast);
    await engine.start(relay, { n: 0 }, { runId: "r" });
    await waitFor(async () => (await engine.getRun("r~3").catch(() => undefined))?.status === "suspended", { what: "r~3 to wait" });
    expect(await engine.request("r", "where", null, { requestId: "q1", timeoutMs: 5000 })).toBe("r~3");
    expect(await engine.sendEvent("r", "note", "hello", { eventId: "n1" })).toEqual({ eventId: "n1", duplicate: false });
    expect(await engine.sendEvent("r~2", "note", "again", { eventId: "n1" })).toMatchObject({ duplicate: true });
    expect(await engine.result("r", { timeoutMs: 5000 })).toEqual({ got: "hello", runId: "r~3" });
  });

  it("starts a delayed run only when its time comes, by the injectable clock", async () => {
    const clock = new ManualClock();
    const hello = defineWorkflow({ name: "hello", run: async () => "hi" });
    const engine = await testEngine(kind, { workflows: [hello], clock: () => clock.now() });
    engine.startWorker(fast);
    await engine.start(hello, null, { runId: "later", delay: "1h" });
    const at = await engine.start(hello, null, { runId: "at", startAt: new Date(clock.now() + 7_200_000) });
    expect(at.created).toBe(true);
    expect(await engine.getRun("later")).toMatchObject({
      status: "suspended",
      wakeAt: new Date(clock.now() + 3_600_000),
      waitingFor: [{ kind: "timer", opKey: "start" }],
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect((await engine.getRun("later")).status).toBe("suspended");
    clock.advance("1h");
    expect(await engine.handle("later").result({ timeoutMs: 5000 })).toBe("hi");
    expect((await engine.getRun("at")).status).toBe("suspended");
    await expect(engine.start(hello, null, { delay: "1h", startAt: Date.now() })).rejects.toMatchObject({ code: "INVALID_INPUT" });
  });

  it("cancels a run when its deadline passes, compensating, even if no worker ran at the time", async () => {
    const clock = new ManualClock();
    const undone: string[] = [];
    const slow = defineWorkflow({
      name: "slow",
      async run(ctx) {
        await ctx.step("book", () => "b-1", { compensate: (id) => void undone.push(String(id)) });
        await ctx.sleep("nap", "10h");
        return "woke";
      },
    });
    const quick = defineWorkflow({ name: "quick", run: async () => "done" });
    const engine = await testEngine(kind, { workflows: [slow, quick], clock: () => clock.now(), deadlines: { pollMs: 20 } });
    const worker = engine.startWorker(fast);
    await engine.start(slow, null, { runId: "d1", deadline: "2h" });
    await engine.start(quick, null, { runId: "d2", deadline: "2h" });
    expect(await engine.handle("d2").result({ timeoutMs: 5000 })).toBe("done");
    await waitFor(async () => (await engine.getRun("d1")).status === "suspended", { what: "d1 to sleep" });
    await worker.stop();
    // No worker runs when the deadline passes.
    clock.advance("3h");
    expect((await engine.getRun("d1")).status).toBe("suspended");
    engine.startWorker(fast);
    await waitFor(async () => (await engine.getRun("d1")).status === "compensated", { what: "d1 cancelled by its deadline", timeoutMs: 5000 });
    const journal = await engine.journal("d1");
    expect(journal.find((e) => e.kind === "run.cancelling")?.data).toEqual({ reason: "deadline" });
    expect(undone).toEqual(["b-1"]);
    expect((await engine.getRun("d2")).status).toBe("completed");
  });
});
