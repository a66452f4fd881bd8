/**
 * Possibly-billed spend under real crashes: a worker process is SIGKILLed while a model request is in
 * flight, again and again. Each send is logged in a ledger outside the process; the run must count
 * every send without a journaled response as possibly billed, charge it against its budget, and stop
 * re-sending after the configured number of such sends.
 */
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { decode } from "../src/core/serialize.js";
import { waitFor } from "../src/testing/wait-for.js";
import { runCli } from "./support/cli.js";
import { spawnWorker } from "./support/processes.js";
import { setUp } from "./support/hanging-model.js";

describe("possibly-billed model calls under SIGKILL", () => {
  it("stops re-sending after 3 sends without a response and asks a person, with what they may have cost", async () => {
    const { engine, env, sends, killMidCall } = await setUp("crash-loop", "loop-1");
    for (let i = 0; i < 3; i++) await killMidCall();
    expect(sends()).toBe(3);
    // The next worker does not send a fourth time: it asks.
    const worker = spawnWorker(env);
    await worker.ready;
    await waitFor(async () => (await engine.listHumanRequests({ status: "pending", runId: "loop-1" })).length === 1, {
      timeoutMs: 20_000,
      what: "the question",
    });
    const [question] = await engine.listHumanRequests({ status: "pending", runId: "loop-1" });
    expect(question!.options).toEqual(["resend", "stop"]);
    expect(question!.question).toContain("was sent 3 times and no response was ever journaled");
    expect(question!.question).toContain("about $3.000000 in all");
    expect(decode(question!.context!)).toEqual({ model: "hanging-model", sends: 3, estimatedCostMicros: 1_000_000, possiblyBilledMicros: 3_000_000 });
    expect(sends()).toBe(3);
    // `cairn show` shows the possibly billed spend apart from the billed cost.
    const shown = await runCli(["show", "loop-1", "--store", env.CAIRN_TEST_STORE], { cwd: resolve(".") });
    expect(shown.stdout).toMatch(/cost\s+\$0\.000000\n/);
    expect(shown.stdout).toContain("possibly billed  $3.000000");
    await engine.respondToHuman(question!.requestId, { action: "answer", option: "stop", by: "ops" });
    await waitFor(async () => (await engine.getRun("loop-1")).status === "failed", { timeoutMs: 20_000, what: "the run to fail" });
    const run = await engine.getRun("loop-1");
    expect(run.error).toMatchObject({ code: "MODEL_CALL_UNCONFIRMED" });
    expect(run.error!.message).toContain("ops chose to stop");
    expect(sends()).toBe(3);
    worker.child.kill("SIGTERM");
    await worker.exited;
  });

  it("charges sends without a response against the cost limit, so a crash loop cannot escape the budget", async () => {
    // Each send is estimated at $1 and the budget is $2.50: the third send would cross it.
    const { engine, env, sends, killMidCall } = await setUp("capped-crash-loop", "capped-1");
    for (let i = 0; i < 2; i++) await killMidCall();
    const worker = spawnWorker(env);
    await worker.ready;
    await waitFor(async () => (await engine.getRun("capped-1")).status === "failed", { timeoutMs: 20_000, what: "the run to fail" });
    const run = await engine.getRun("capped-1");
    expect(run.error).toMatchObject({ code: "BUDGET_EXCEEDED" });
    expect(run.error!.message).toContain("plus $2.000000 possibly billed");
    expect(sends()).toBe(2);
    worker.child.kill("SIGTERM");
    await worker.exited;
  });
});
