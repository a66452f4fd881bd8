/**
 * The context summary call under real crashes: it gets the same resend cap and possibly-billed
 * accounting as every model call. A worker is SIGKILLed while the summary request is in flight.
 */
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { decode } from "../src/core/serialize.js";
import { waitFor } from "../src/testing/wait-for.js";
import { runCli } from "./support/cli.js";
import { spawnWorker } from "./support/processes.js";
import { setUp } from "./support/hanging-model.js";

describe("possibly-billed summary calls under SIGKILL", () => {
  it("gives the context summary call the same cap: 3 sends without a response, then a person decides", async () => {
    const { engine, env, sends, killMidCall } = await setUp("summary-crash-loop", "summary-1");
    for (let i = 0; i < 3; i++) await killMidCall();
    expect(sends()).toBe(3);
    const worker = spawnWorker(env);
    await worker.ready;
    await waitFor(async () => (await engine.listHumanRequests({ status: "pending", runId: "summary-1" })).length === 1, {
      timeoutMs: 20_000,
      what: "the question",
    });
    const [question] = await engine.listHumanRequests({ status: "pending", runId: "summary-1" });
    expect(question!.question).toContain('Model call "summarize#0" was sent 3 times and no response was ever journaled');
    expect(decode(question!.context!)).toEqual({ model: "hanging-model", sends: 3, estimatedCostMicros: 1_000_000, possiblyBilledMicros: 3_000_000 });
    const shown = await runCli(["show", "summary-1", "--store", env.CAIRN_TEST_STORE], { cwd: resolve(".") });
    expect(shown.stdout).toContain("possibly billed  $3.000000");
    await engine.respondToHuman(question!.requestId, { action: "answer", option: "stop", by: "ops" });
    await waitFor(async () => (await engine.getRun("summary-1")).status === "failed", { timeoutMs: 20_000, what: "the run to fail" });
    expect((await engine.getRun("summary-1")).error).toMatchObject({ code: "MODEL_CALL_UNCONFIRMED" });
    expect(sends()).toBe(3);
    worker.child.kill("SIGTERM");
    await worker.exited;
  });
});
