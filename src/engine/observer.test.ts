import { describe, expect, it } from "vitest";
import { STORE_KINDS, testEngine } from "../../test/support/engines.js";
import { defineWorkflow } from "./define-workflow.js";
import type { EngineEvent, StepAttempt } from "./observer.js";
import { waitFor } from "../testing/wait-for.js";

describe.each(STORE_KINDS)("engine events on %s", (kind) => {
  it("reports each step attempt once it is durable, with its outcome and duration; unsubscribing stops them", async () => {
    let fail = true;
    const wf = defineWorkflow({
      name: "observed",
      async run(ctx) {
        const a = await ctx.step("a", () => 1);
        const b = await ctx.step(
          "b",
          () => {
            if (fail) {
              fail = false;
              throw new Error("once");
            }
            return 2;
          },
          { retry: { maxAttempts: 2, initialDelay: 1 } },
        );
        return a + b;
      },
    });
    const seen: EngineEvent[] = [];
    const logged: string[] = [];
    const engine = await testEngine(kind, {
      workflows: [wf],
      observer: () => {
        throw new Error("a broken observer");
      },
      logger: { log: (_level, message) => logged.push(message) },
    });
    const stop = engine.observe((event) => seen.push(event));
    engine.startWorker({ pollInterval: 10 });
    expect(await (await engine.start(wf, undefined, { runId: "o1" })).result({ timeoutMs: 5000 })).toBe(3);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const committed = seen.filter((e) => e.type === "committed");
    // Every commit of the worker is announced: together they cover the journal but what start wrote
    // (run.created, and run.claimed when the local worker took the run at creation).
    const announced = committed.reduce((n, e) => n + (e.type === "committed" ? e.entries : 0), 0);
    const entries = (await engine.getRun("o1")).entries;
    expect(announced).toBeGreaterThanOrEqual(entries - 2);
    expect(announced).toBeLessThanOrEqual(entries - 1);
    expect(committed.every((e) => e.runId === "o1" && e.workflow === "observed")).toBe(true);
    const others = seen.filter((e) => e.type !== "committed");
    expect(others.map((e) => (e.type === "step" ? [e.opKey, e.outcome, e.attempt, e.result] : e.type))).toEqual([
      "execution-started",
      ["a#0", "completed", 1, 1],
      ["b#0", "retry", 1, undefined],
      ["b#0", "completed", 2, 2],
      "execution-ended",
    ]);
    expect(others.at(-1)).toMatchObject({ type: "execution-ended", end: "completed", durationMs: expect.any(Number) });
    for (const event of seen.filter((e) => e.type === "step"))
      expect(event).toMatchObject({ runId: "o1", workflow: "observed", durationMs: expect.any(Number) });
    expect(logged.filter((m) => m.includes("observer threw")).length).toBe(seen.length);
    stop();
    const count = seen.length;
    fail = true;
    await (await engine.start(wf, undefined, { runId: "o2" })).result({ timeoutMs: 5000 });
    expect(seen).toHaveLength(count);
  });

  it("aroundStep wraps each attempt's function after its intent is durable; one that throws is skipped, the step runs once; unsubscribing removes it", async () => {
    let calls = 0;
    const wf = defineWorkflow({
      name: "wrapped",
      async run(ctx) {
        const first = await ctx.step("a", () => ++calls);
        await ctx.waitForEvent("go");
        return first + (await ctx.step("b", () => ++calls));
      },
    });
    const logged: string[] = [];
    const engine = await testEngine(kind, { workflows: [wf], logger: { log: (_level, message) => void logged.push(message) } });
    const wrapped: string[] = [];
    const observer = Object.assign(() => {}, {
      aroundStep: <T>(step: StepAttempt, run: () => T): T => {
        wrapped.push(`${step.workflow} ${step.opKey} ${step.attempt}`);
        return run();
      },
    });
    const broken = Object.assign(() => {}, {
      aroundStep: (): never => {
        throw new Error("tracer down");
      },
    });
    const stop = engine.observe(observer);
    const stopBroken = engine.observe(broken);
    const worker = engine.startWorker({ pollInterval: 10 });
    const handle = await engine.start(wf, undefined, { runId: "w1" });
    await waitFor(async () => (await engine.getRun("w1")).status === "suspended");
    const journal = await engine.journal("w1");
    expect(journal.filter((e) => e.kind === "step.started").map((e) => e.opKey)).toEqual(["a#0"]);
    expect(wrapped).toEqual(["wrapped a#0 1"]);
    expect(logged).toContain("an engine observer's aroundStep threw; the step runs without it");
    stop();
    stopBroken();
    await engine.sendEvent("w1", "go", null);
    expect(await handle.result({ timeoutMs: 5000 })).toBe(3);
    expect(calls).toBe(2);
    expect(wrapped).toEqual(["wrapped a#0 1"]);
    await worker.stop();
  });
});
