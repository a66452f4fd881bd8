import { describe, expect, it } from "vitest";
import { STORE_KINDS, testEngine } from "../../test/support/engines.js";
import { ValidationError } from "../core/errors.js";
import { waitFor } from "../testing/wait-for.js";
import { defineWorkflow } from "./define-workflow.js";

const fast = { pollInterval: 10 };

describe.each(STORE_KINDS)("step flow control on %s", (kind) => {
  it("a concurrency limit per key is reached, never exceeded, and does not block other keys; waiting runs suspend", async () => {
    const running = new Map<string, number>();
    const peak = new Map<string, number>();
    const gates: (() => void)[] = [];
    const wf = defineWorkflow({
      name: "limited",
      async run(ctx, input: { tenant: string }) {
        return ctx.step(
          "call-model",
          async () => {
            const now = (running.get(input.tenant) ?? 0) + 1;
            running.set(input.tenant, now);
            peak.set(input.tenant, Math.max(peak.get(input.tenant) ?? 0, now));
            if (input.tenant === "a") await new Promise<void>((resolve) => gates.push(resolve));
            running.set(input.tenant, running.get(input.tenant)! - 1);
            return input.tenant;
          },
          { concurrency: { key: input.tenant, limit: 2 } },
        );
      },
    });
    const engine = await testEngine(kind, { workflows: [wf] });
    for (let i = 0; i < 5; i++) await engine.start(wf, { tenant: "a" }, { runId: `a${i}` });
    engine.startWorker({ ...fast, concurrency: 16 });
    await waitFor(() => gates.length === 2, { timeoutMs: 5000 });
    // The other three runs of tenant a wait for a slot, suspended (no worker memory), with their place in line.
    await waitFor(async () => (await engine.listRuns({ status: "suspended" })).runs.length === 3, { timeoutMs: 5000 });
    const waiting = (await engine.listRuns({ status: "suspended" })).runs.flatMap((r) => r.waitingFor.map((w) => w.kind));
    expect(waiting).toEqual(["flow", "flow", "flow"]);
    // Tenant b is not blocked by a's full slots.
    await engine.start(wf, { tenant: "b" }, { runId: "b0" });
    expect(await engine.handle("b0").result({ timeoutMs: 5000 })).toBe("b");
    // Releasing a's slots one by one lets the waiting runs in, never more than two at once.
    let released = 0;
    while (released < 5) {
      await waitFor(() => gates.length > 0, { timeoutMs: 5000 });
      gates.shift()!();
      released += 1;
    }
    for (let i = 0; i < 5; i++) expect(await engine.handle(`a${i}`).result({ timeoutMs: 5000 })).toBe("a");
    expect(peak.get("a")).toBe(2);
  });

  it("a rate limit per key lets `limit` starts through per period, then wakes the waiters when the window moves", async () => {
    const starts: number[] = [];
    const wf = defineWorkflow({
      name: "rated",
      async run(ctx, input: { tenant: string }) {
        return ctx.step("call", () => starts.push(Date.now()), { rateLimit: { key: input.tenant, limit: 2, period: "1s" } });
      },
    });
    const engine = await testEngine(kind, { workflows: [wf] });
    const begin = Date.now();
    for (let i = 0; i < 5; i++) await engine.start(wf, { tenant: "t" }, { runId: `r${i}` });
    engine.startWorker({ ...fast, concurrency: 16 });
    for (let i = 0; i < 5; i++) await engine.handle(`r${i}`).result({ timeoutMs: 10_000 });
    starts.sort((a, b) => a - b);
    // No 1 s window holds more than 2 starts. A step body runs some time after its grant (up to ~100 ms
    // on a loaded machine), hence the margin; without the limit all five start within a few ms.
    // 5 starts need at least two window moves.
    for (let i = 2; i < starts.length; i++) expect(starts[i]! - starts[i - 2]!).toBeGreaterThanOrEqual(750);
    expect(starts.at(-1)! - begin).toBeGreaterThanOrEqual(2000);
  });

  it("refuses bad limits at the call, naming the option", async () => {
    const wf = defineWorkflow({
      name: "bad-limit",
      async run(ctx) {
        return ctx.step("x", () => 1, { concurrency: { key: "", limit: 0 } });
      },
    });
    const engine = await testEngine(kind, { workflows: [wf] });
    const run = await engine.start(wf, undefined, { runId: "bad" });
    engine.startWorker(fast);
    const error = await run.result({ timeoutMs: 5000 }).catch((e: unknown) => e);
    expect(String((error as Error).message)).toMatch(/concurrency must be/);
    expect(ValidationError).toBeDefined();
  });
});
