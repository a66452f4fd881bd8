import { describe, expect, it } from "vitest";
import { onCleanup, STORE_KINDS, storeUrl, type StoreKind } from "../../../test/support/engines.js";
import { ALERT_TOPIC, parseAlertRules, type AlertRuleInput } from "../../core/alert-schemas.js";
import { decode } from "../../core/serialize.js";
import { createEngine } from "../../engine/create-engine.js";
import { defineWorkflow } from "../../engine/define-workflow.js";
import type { Engine } from "../../engine/engine.js";
import { silentLogger } from "../../engine/logger.js";
import { ManualClock } from "../../testing/manual-clock.js";
import { waitFor } from "../../testing/wait-for.js";
import { ALERT_WORKFLOW } from "./alert-fire.js";
import { writeAlertRules } from "./alert-rules.js";
import { evaluateAlerts, startAlertEvaluator } from "./evaluator.js";

/** A stand-in for an agent: its one model step journals a cost as an agent's model step does. */
const agentish = defineWorkflow({
  name: "agentish",
  async run(ctx, input: { usd: number }) {
    await ctx.step("model", () => ({ usage: { inputTokens: 10, outputTokens: 5 }, costMicros: Math.round(input.usd * 1_000_000) }));
    return "ok";
  },
});
const other = defineWorkflow({
  name: "other",
  async run(ctx, input: { usd: number }) {
    await ctx.step("model", () => ({ usage: { inputTokens: 1, outputTokens: 1 }, costMicros: Math.round(input.usd * 1_000_000) }));
  },
});
const flaky = defineWorkflow({
  name: "flaky",
  async run(ctx, input: { fail: boolean }) {
    await ctx.step(
      "work",
      () => {
        if (input.fail) throw new Error("upstream 503");
      },
      { retry: { maxAttempts: 1 } },
    );
  },
});
const review = defineWorkflow({
  name: "review",
  async run(ctx) {
    return ctx.askHuman({ name: "approve", question: "Ship it?", options: ["yes", "no"] });
  },
});
/** Spends nothing itself; its two children do. */
const manager = defineWorkflow({
  name: "manager",
  async run(ctx, input: { usd: number }) {
    await Promise.all(["a", "b"].map((n) => ctx.child(agentish, { usd: input.usd }, { runId: `${ctx.runId}/${n}`, name: n })));
  },
});
const workflows = [agentish, other, flaky, review, manager];
const T0 = Date.UTC(2030, 0, 1, 10, 5); // 10:05 UTC: hour windows start at 10:00

/** Two engines on one store, as two servers would share it, on one manual clock. */
async function engines(kind: StoreKind, clock: ManualClock): Promise<[Engine, Engine]> {
  const url = storeUrl(kind);
  const a = await createEngine({ store: url, workflows, clock: clock.now, logger: silentLogger });
  onCleanup(() => a.close());
  if (kind === "memory") return [a, a];
  const b = await createEngine({ store: url, workflows: [], clock: clock.now, logger: silentLogger });
  onCleanup(() => b.close());
  return [a, b];
}

async function runAll(engine: Engine, starts: [typeof agentish | typeof other | typeof flaky, unknown, string][]): Promise<void> {
  const worker = engine.startWorker({ pollInterval: 10 });
  for (const [workflow, input, runId] of starts) await engine.start(workflow as typeof agentish, input as { usd: number }, { runId });
  await waitFor(
    async () => {
      for (const [, , runId] of starts) if (!["completed", "failed"].includes((await engine.getRun(runId)).status)) return false;
      return true;
    },
    { what: "the runs to finish" },
  );
  await worker.stop();
}

const rules = (...list: AlertRuleInput[]) => parseAlertRules({ rules: list }, "test");
const alertMessages = async (engine: Engine) =>
  (await engine.listOutbox({ topic: ALERT_TOPIC, limit: 1000 })).map((m) => ({ ...m, payload: decode<{ alertId: string }>(m.payload) }));

describe.each(STORE_KINDS)("alerts on %s", (kind) => {
  it("spend rules fire on the runs, workflows and days over their limit, not on those under it, once each", async () => {
    const clock = new ManualClock(T0);
    const [engine] = await engines(kind, clock);
    await runAll(engine, [
      [agentish, { usd: 3 }, "big"],
      [agentish, { usd: 0.5 }, "small"],
      [other, { usd: 0.2 }, "o-1"],
    ]);
    const set = rules(
      { name: "run-2", kind: "spendPerRun", threshold: 2 },
      { name: "run-5", kind: "spendPerRun", threshold: 5 },
      { name: "wf-3", kind: "spendPerWorkflow", threshold: 3.2, window: "1h" },
      { name: "wf-10", kind: "spendPerWorkflow", threshold: 10 },
      { name: "day-3.6", kind: "spendPerDay", threshold: 3.6 },
      { name: "day-4", kind: "spendPerDay", threshold: 4 },
      { name: "day-other", kind: "spendPerDay", threshold: 0.3, workflow: "other" },
    );
    clock.advance("1m");
    const first = await evaluateAlerts(engine.store, { now: clock.now(), evaluatorId: "e1", rules: set });
    expect(first.fired.map((a) => a.alertId).sort()).toEqual(["day-3.6/2030-01-01", "run-2/run/big", "wf-3/agentish/2030-01-01T10:00:00.000Z"]);
    const run = first.fired.find((a) => a.rule === "run-2")!;
    expect(run).toMatchObject({ kind: "spendPerRun", value: 3_000_000, threshold: 2_000_000, workflow: "agentish", runIds: ["big"] });
    expect(run.summary).toContain("$3.00");
    const day = first.fired.find((a) => a.rule === "day-3.6")!;
    expect(day).toMatchObject({ value: 3_700_000, windowStart: "2030-01-01T00:00:00.000Z", windowEnd: "2030-01-02T00:00:00.000Z" });
    expect(day.runIds).toEqual(["big", "small", "o-1"]);

    // Evaluated again, later in the hour and in the next one: nothing new fires, one message per alert.
    clock.advance("20m");
    expect((await evaluateAlerts(engine.store, { now: clock.now(), evaluatorId: "e1", rules: set })).fired).toEqual([]);
    clock.advance("1h");
    expect((await evaluateAlerts(engine.store, { now: clock.now(), evaluatorId: "e2", rules: set })).fired).toEqual([]);
    const messages = await alertMessages(engine);
    expect(messages.map((m) => m.payload.alertId).sort()).toEqual(first.fired.map((a) => a.alertId).sort());
    expect(messages.every((m) => m.status === "pending" && m.messageId === `${m.runId}:alert#0`)).toBe(true);

    // New spend in the new hour breaches the workflow rule again: a new window, a new alert.
    await runAll(engine, [[agentish, { usd: 4 }, "bigger"]]);
    const next = await evaluateAlerts(engine.store, { now: clock.now(), evaluatorId: "e1", rules: set });
    expect(next.fired.map((a) => a.alertId).sort()).toEqual(["day-4/2030-01-01", "run-2/run/bigger", "wf-3/agentish/2030-01-01T11:00:00.000Z"]);
  });

  it("a run's spend includes its children's, under the parent's own workflow when only the children spent", async () => {
    const clock = new ManualClock(T0);
    const [engine] = await engines(kind, clock);
    await runAll(engine, [[manager, { usd: 0.75 }, "boss"]]);
    const set = rules(
      { name: "tree", kind: "spendPerRun", threshold: 1.4, workflow: "manager" },
      { name: "child-wf", kind: "spendPerRun", threshold: 0.1, workflow: "agentish" },
    );
    const { fired } = await evaluateAlerts(engine.store, { now: clock.now(), evaluatorId: "e", rules: set });
    expect(fired.map((a) => a.alertId)).toEqual(["tree/run/boss"]);
    expect(fired[0]).toMatchObject({ workflow: "manager", value: 1_500_000 });
    expect([...fired[0]!.runIds].sort()).toEqual(["boss", "boss/a", "boss/b"]);
  });

  it("fire exactly one message per breach when two evaluators on one store race", async () => {
    const clock = new ManualClock(T0);
    const [a, b] = await engines(kind, clock);
    await runAll(a, [
      [agentish, { usd: 1 }, "r1"],
      [agentish, { usd: 1 }, "r2"],
      [agentish, { usd: 1 }, "r3"],
    ]);
    const set = rules({ name: "per-run", kind: "spendPerRun", threshold: 0.5 }, { name: "per-day", kind: "spendPerDay", threshold: 2 });
    for (let round = 0; round < 3; round++) {
      await Promise.all([
        evaluateAlerts(a.store, { now: clock.now(), evaluatorId: "a", rules: set }),
        evaluateAlerts(b.store, { now: clock.now(), evaluatorId: "b", rules: set }),
        evaluateAlerts(b.store, { now: clock.now(), evaluatorId: "c", rules: set }),
      ]);
    }
    const ids = (await alertMessages(a)).map((m) => m.payload.alertId).sort();
    expect(ids).toEqual(["per-day/2030-01-01", "per-run/run/r1", "per-run/run/r2", "per-run/run/r3"]);
    const runs = await a.listRuns({ workflow: ALERT_WORKFLOW, limit: 100 });
    expect(runs.runs.map((r) => r.status)).toEqual(["completed", "completed", "completed", "completed"]);
  });

  it("failure rate fires when enough finished runs of a window failed, not below the rate or the minimum", async () => {
    const clock = new ManualClock(T0);
    const [engine] = await engines(kind, clock);
    await runAll(
      engine,
      Array.from({ length: 10 }, (_, i) => [flaky, { fail: i < 3 }, `f-${i}`] as [typeof flaky, unknown, string]),
    );
    const set = rules(
      { name: "rate-25", kind: "failureRate", threshold: 0.25, window: "1h" },
      { name: "rate-50", kind: "failureRate", threshold: 0.5, window: "1h" },
      { name: "rate-few", kind: "failureRate", threshold: 0.1, minRuns: 11 },
      { name: "rate-other", kind: "failureRate", threshold: 0.1, minRuns: 1, workflow: "agentish" },
    );
    const { fired } = await evaluateAlerts(engine.store, { now: clock.now(), evaluatorId: "e", rules: set });
    expect(fired.map((a) => a.alertId)).toEqual(["rate-25/2030-01-01T10:00:00.000Z"]);
    expect(fired[0]).toMatchObject({ value: 0.3, threshold: 0.25, windowEnd: "2030-01-01T11:00:00.000Z" });
    expect([...fired[0]!.runIds].sort()).toEqual(["f-0", "f-1", "f-2"]);
    expect(fired[0]!.summary).toContain("3 of 10 finished runs");
  });

  it("stuck runs and questions waiting past their limit fire once per window and once per question", async () => {
    const clock = new ManualClock(T0);
    const [engine] = await engines(kind, clock);
    const worker = engine.startWorker({ pollInterval: 10 });
    await engine.start(review, {}, { runId: "rev-1" });
    await waitFor(async () => (await engine.getRun("rev-1")).status === "suspended", { what: "the run to wait for its answer" });
    await worker.stop();
    // No worker for these: pending, never claimed, stuck after the grace minute.
    await engine.start(flaky, { fail: false }, { runId: "s-1" });
    await engine.start(flaky, { fail: false }, { runId: "s-2" });
    const set = rules(
      { name: "wait-1h", kind: "humanWaiting", threshold: "1h" },
      { name: "wait-3h", kind: "humanWaiting", threshold: "3h" },
      { name: "wait-other", kind: "humanWaiting", threshold: "1m", workflow: "agentish" },
      { name: "stuck-2", kind: "stuckRuns", threshold: 2, window: "1h" },
      { name: "stuck-3", kind: "stuckRuns", threshold: 3 },
    );
    clock.advance("30s");
    expect((await evaluateAlerts(engine.store, { now: clock.now(), evaluatorId: "e", rules: set })).fired).toEqual([]);
    clock.advance("90m");
    const { fired } = await evaluateAlerts(engine.store, { now: clock.now(), evaluatorId: "e", rules: set });
    const requestId = (await engine.listHumanRequests({ status: "pending" }))[0]!.requestId;
    expect(fired.map((a) => a.alertId)).toEqual([`wait-1h/request/${requestId}`, "stuck-2/2030-01-01T11:00:00.000Z"]);
    expect(fired[0]).toMatchObject({ requestId, workflow: "review", runIds: ["rev-1"], value: 90.5 * 60_000 });
    expect([...fired[1]!.runIds].sort()).toEqual(["s-1", "s-2"]);
    clock.advance("20m");
    expect((await evaluateAlerts(engine.store, { now: clock.now(), evaluatorId: "e", rules: set })).fired).toEqual([]);
    // The next hour, the runs still stuck: the stuck rule fires again (once per window); the question does not.
    clock.advance("1h");
    const later = await evaluateAlerts(engine.store, { now: clock.now(), evaluatorId: "e", rules: set });
    expect(later.fired.map((a) => a.alertId)).toEqual(["stuck-2/2030-01-01T12:00:00.000Z"]);
  });

  it("fire at most 20 new alerts per rule and evaluation; breaches that fired before never hold the others back", async () => {
    const clock = new ManualClock(T0);
    const [engine] = await engines(kind, clock);
    await runAll(
      engine,
      Array.from({ length: 25 }, (_, i) => [agentish, { usd: 1 }, `r-${String(i).padStart(2, "0")}`] as [typeof agentish, unknown, string]),
    );
    const set = rules({ name: "each", kind: "spendPerRun", threshold: 0.5 });
    const counts: number[] = [];
    for (let round = 0; round < 3; round++) counts.push((await evaluateAlerts(engine.store, { now: clock.now(), evaluatorId: "e", rules: set })).fired.length);
    expect(counts).toEqual([20, 5, 0]);
    expect(new Set((await alertMessages(engine)).map((m) => m.payload.alertId)).size).toBe(25);
  });

  it("finish an alert whose evaluator died between creating it and writing its message", async () => {
    const clock = new ManualClock(T0);
    const [engine] = await engines(kind, clock);
    const payload = {
      alertId: "half/x",
      rule: "half",
      kind: "stuckRuns" as const,
      summary: "s",
      value: 1,
      threshold: 1,
      windowStart: null,
      windowEnd: null,
      workflow: null,
      runIds: [],
      requestId: null,
      description: null,
      firedAt: new Date(T0).toISOString(),
    };
    // What fireAlert's first write leaves behind when the process dies right after it.
    await engine.store.createRun(
      { runId: "cairn.alert/half/x", workflow: ALERT_WORKFLOW, version: "1", input: JSON.stringify(payload), claimFor: { workerId: "dead", leaseMs: 60_000 } },
      clock.now(),
    );
    expect(await alertMessages(engine)).toEqual([]);
    expect((await evaluateAlerts(engine.store, { now: clock.now(), evaluatorId: "e", rules: [] })).recovered).toBe(0);
    clock.advance("61s");
    expect((await evaluateAlerts(engine.store, { now: clock.now(), evaluatorId: "e", rules: [] })).recovered).toBe(1);
    expect((await alertMessages(engine)).map((m) => m.payload.alertId)).toEqual(["half/x"]);
    expect((await engine.getRun("cairn.alert/half/x")).status).toBe("completed");
  });

  it("the running evaluator reads the stored rules and delivers alerts to a cairn.alert handler", async () => {
    const clock = new ManualClock(T0);
    const url = storeUrl(kind);
    const received: string[] = [];
    const engine = await createEngine({
      store: url,
      workflows,
      clock: clock.now,
      logger: silentLogger,
      outbox: { handlers: { [ALERT_TOPIC]: (m) => void received.push((m.payload as { alertId: string }).alertId) } },
    });
    onCleanup(() => engine.close());
    await runAll(engine, [[agentish, { usd: 2 }, "spender"]]);
    await writeAlertRules(engine.store, rules({ name: "costly", kind: "spendPerRun", threshold: 1 }), "test", clock.now());
    const dispatcher = engine.startDispatcher({ pollInterval: 10 });
    const evaluator = startAlertEvaluator(engine.store, { intervalMs: 20, clock: clock.now, logger: silentLogger });
    onCleanup(() => dispatcher.stop());
    onCleanup(() => evaluator.stop());
    await waitFor(() => received.length > 0, { what: "the alert to be delivered" });
    await evaluator.evaluate();
    await evaluator.evaluate();
    expect(received).toEqual(["costly/run/spender"]);
  });
});
