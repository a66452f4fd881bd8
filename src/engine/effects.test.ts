/**
 * DESIGN §3.4: an intent without an outcome after a crash is resolved by the step's
 * declared effect, never blindly repeated. The "crash" here is a worker stopped without
 * draining while the step runs; crash tests do the same with SIGKILL.
 */
import { describe, expect, it } from "vitest";
import { deferred, sharedEngines, STORE_KINDS, type StoreKind } from "../../test/support/engines.js";
import { HumanRequestNotFoundError, isCairnError, NonRetryableError, StepTimeoutError, ValidationError } from "../core/errors.js";
import { waitFor } from "../testing/wait-for.js";
import { defineWorkflow } from "./define-workflow.js";
import type { Engine } from "./engine.js";
import type { StepOptions } from "./workflow.js";

const fast = { pollInterval: 10 };

/** Runs a one-step workflow, interrupts the first attempt mid-flight, and resumes it on a second engine. */
async function interrupted(kind: StoreKind, options: StepOptions<string>) {
  const calls: number[] = [];
  const hang = deferred<string>();
  const wf = defineWorkflow({
    name: "effectful",
    async run(ctx) {
      const value = await ctx.step("charge", ({ attempt }) => (calls.push(attempt), attempt === 1 ? hang.promise : `charged-${attempt}`), options);
      return `result:${value}`;
    },
  });
  const [one, two] = await sharedEngines(kind, [wf], [wf]);
  const worker = one!.startWorker(fast);
  await one!.start(wf, undefined, { runId: "fx" });
  await waitFor(() => calls.length === 1);
  await worker.stop({ drain: false });
  two!.startWorker(fast);
  return { engine: two!, calls };
}

async function kindsOf(engine: Engine, runId: string) {
  return (await engine.journal(runId)).map((e) => e.kind);
}

describe.each(STORE_KINDS)("step effects on %s", (kind) => {
  it("idempotent (the default) runs again with the same idempotency key", async () => {
    const { engine, calls } = await interrupted(kind, {});
    expect(await engine.result("fx", { timeoutMs: 5000 })).toBe("result:charged-2");
    expect(calls).toEqual([1, 2]);
    const reconciled = (await engine.journal("fx")).find((e) => e.kind === "step.reconciled");
    expect(reconciled?.data).toMatchObject({ action: "rerun", via: "effect" });
  });

  it("reconcile is asked first: a confirmed effect is journaled without running the step again", async () => {
    const asked: string[] = [];
    const { engine, calls } = await interrupted(kind, { reconcile: (key) => (asked.push(key), { done: true, value: "found-upstream" }) });
    expect(await engine.result("fx", { timeoutMs: 5000 })).toBe("result:found-upstream");
    expect(asked).toEqual(["fx:charge#0"]);
    expect(calls).toEqual([1]);
  });

  it("reconcile saying it did not happen lets the step run again", async () => {
    const { engine, calls } = await interrupted(kind, { reconcile: () => ({ done: false }) });
    expect(await engine.result("fx", { timeoutMs: 5000 })).toBe("result:charged-2");
    expect(calls).toEqual([1, 2]);
  });

  it("reversible compensates the unknown attempt, then runs again", async () => {
    const compensated: unknown[] = [];
    const { engine, calls } = await interrupted(kind, {
      effect: "reversible",
      compensate: (result, { idempotencyKey }) => void compensated.push([result, idempotencyKey]),
    });
    expect(await engine.result("fx", { timeoutMs: 5000 })).toBe("result:charged-2");
    expect(compensated).toEqual([[undefined, "fx:charge#0"]]);
    expect(calls).toEqual([1, 2]);
  });

  it.each([
    ["skip", { action: "skip", value: "charged-by-hand" }, "result:charged-by-hand", [1]],
    ["retry", { action: "retry" }, "result:charged-2", [1, 2]],
  ] as const)("unsafe suspends with a 'did this happen?' request; answering %s resumes it", async (_name, answer, expected, expectedCalls) => {
    const { engine, calls } = await interrupted(kind, { effect: "unsafe" });
    const run = await waitFor(async () => {
      const info = await engine.getRun("fx");
      return info.status === "suspended" && info;
    });
    expect(run.waitingFor).toEqual([{ kind: "human", opKey: "charge#0", requestId: "fx:charge#0:1", timeoutAt: null }]);
    const [request] = await engine.listHumanRequests({ status: "pending" });
    expect(request).toMatchObject({ requestId: "fx:charge#0:1", runId: "fx", opKey: "charge#0", options: ["retry", "skip", "fail"] });
    expect(request!.question).toMatch(/Did it happen\?/);
    await engine.respondToHuman("fx:charge#0:1", answer);
    expect(await engine.result("fx", { timeoutMs: 5000 })).toBe(expected);
    expect(calls).toEqual(expectedCalls);
    // A second answer is a no-op that returns the first.
    expect(await engine.respondToHuman("fx:charge#0:1", { action: "fail" })).toEqual({ answer, duplicate: true });
    await expect(engine.respondToHuman("nope", { action: "retry" })).rejects.toBeInstanceOf(HumanRequestNotFoundError);
    await expect(engine.respondToHuman("fx:charge#0:1", { action: "maybe" } as never)).rejects.toBeInstanceOf(ValidationError);
    const kinds = await kindsOf(engine, "fx");
    expect(kinds.filter((k) => k === "human.requested")).toHaveLength(1);
    expect(kinds.filter((k) => k === "human.answered")).toHaveLength(1);
  });

  it("unsafe answered 'fail' fails the step without running it again", async () => {
    const { engine, calls } = await interrupted(kind, { effect: "unsafe" });
    await waitFor(async () => (await engine.listHumanRequests({ status: "pending" })).length === 1);
    await engine.respondToHuman("fx:charge#0:1", { action: "fail", message: "the card was declined" });
    await expect(engine.result("fx", { timeoutMs: 5000 })).rejects.toThrow(/the card was declined/);
    expect(calls).toEqual([1]);
  });
});

describe.each(STORE_KINDS)("step retries and timeouts on %s", (kind) => {
  it("a per-attempt timeout aborts the attempt's signal and counts as a retryable failure", async () => {
    const aborted: unknown[] = [];
    const wf = defineWorkflow({
      name: "slow",
      async run(ctx) {
        return ctx.step(
          "slow",
          ({ attempt, signal }) => {
            if (attempt === 2) return "fast enough";
            return new Promise((resolve) => signal.addEventListener("abort", () => (aborted.push(signal.reason), resolve("too late"))));
          },
          { timeout: "50ms", retry: { initialDelay: 1 } },
        );
      },
    });
    const [engine] = await sharedEngines(kind, [wf]);
    engine!.startWorker(fast);
    await engine!.start(wf, undefined, { runId: "to" });
    expect(await engine!.result("to", { timeoutMs: 5000 })).toBe("fast enough");
    expect(aborted).toHaveLength(1);
    expect(aborted[0]).toBeInstanceOf(StepTimeoutError);
    const failed = (await engine!.journal("to")).find((e) => e.kind === "step.failed");
    expect((failed?.data as { error: { code: string } }).error.code).toBe("STEP_TIMEOUT");
  });

  it("non-retryable errors (by class, flag or policy) stop after one attempt; others use every attempt", async () => {
    const attempts: Record<string, number> = {};
    const wf = defineWorkflow({
      name: "failing",
      async run(ctx, mode: string) {
        return ctx.step(
          "work",
          () => {
            attempts[mode] = (attempts[mode] ?? 0) + 1;
            if (mode === "class") throw new NonRetryableError("bad request");
            if (mode === "policy") throw Object.assign(new Error("quota"), { code: "QUOTA" });
            throw new Error("transient");
          },
          { retry: { maxAttempts: 3, initialDelay: 1, nonRetryable: ["QUOTA"] } },
        );
      },
    });
    const [engine] = await sharedEngines(kind, [wf]);
    engine!.startWorker(fast);
    for (const mode of ["class", "policy", "plain"]) {
      await engine!.start(wf, mode, { runId: mode });
      const error = await engine!.result(mode, { timeoutMs: 5000 }).catch((e: unknown) => e);
      expect(isCairnError(error, "RUN_FAILED")).toBe(true);
    }
    expect(attempts).toEqual({ class: 1, policy: 1, plain: 3 });
  });

  it("heartbeat() renews the lease so a long step keeps its run", async () => {
    const gate = deferred();
    const beats: number[] = [];
    const wf = defineWorkflow({
      name: "beating",
      async run(ctx) {
        return ctx.step("long", async ({ heartbeat }) => {
          for (let i = 0; i < 5; i++) {
            heartbeat();
            beats.push(i);
            await new Promise((resolve) => setTimeout(resolve, 100));
          }
          await gate.promise;
          return "alive";
        });
      },
    });
    const [engine, other] = await sharedEngines(kind, [wf], [wf]);
    engine!.startWorker({ ...fast, leaseMs: 400, heartbeatMs: 100_000 });
    other!.startWorker({ ...fast, leaseMs: 400 });
    await engine!.start(wf, undefined, { runId: "hb" });
    await waitFor(() => beats.length === 5);
    gate.resolve();
    expect(await engine!.result("hb", { timeoutMs: 5000 })).toBe("alive");
    const claims = (await engine!.journal("hb")).filter((e) => e.kind === "run.claimed");
    expect(claims).toHaveLength(1);
  });
});
