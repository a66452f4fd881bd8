import { describe, expect, it } from "vitest";
import { deferred, sharedEngines, STORE_KINDS, testEngine } from "../../test/support/engines.js";
import { aesGcmCodec } from "../store/payloads/aes-gcm-codec.js";
import { waitFor } from "../testing/wait-for.js";
import { defineWorkflow } from "./define-workflow.js";
import type { Engine } from "./engine.js";

const fast = { pollInterval: 10 };

async function entries(engine: Engine, runId: string, kind: string) {
  return (await engine.journal(runId)).filter((e) => e.kind === kind).map((e) => e.opKey);
}

/** Waits until the journal has an entry of `kind` for `opKey`. */
function journaled(engine: Engine, runId: string, kind: string, opKey: string) {
  return waitFor(async () => (await entries(engine, runId, kind)).includes(opKey), { what: `${kind} ${opKey}` });
}

describe.each(STORE_KINDS)("replay on %s", (kind) => {
  it.each([
    ["a", "b", "c"],
    ["c", "a", "b"],
    ["b", "c", "a"],
  ])("Promise.all completing in order %s,%s,%s replays without re-running finished steps", async (...order) => {
    const gates = Object.fromEntries(["a", "b", "c"].map((n) => [n, deferred<string>()]));
    const runs: Record<string, number> = {};
    const hang = deferred<string>();
    let crashed = false;
    const wf = defineWorkflow({
      name: "fan-out",
      async run(ctx) {
        const seen: string[] = [];
        const results = await Promise.all(
          ["a", "b", "c"].map((n) =>
            ctx
              .step(n, async () => {
                runs[n] = (runs[n] ?? 0) + 1;
                return crashed ? `${n}-again` : gates[n]!.promise;
              })
              .then((value) => (seen.push(value), value)),
          ),
        );
        const after = await ctx.step("after", async () => {
          runs.after = (runs.after ?? 0) + 1;
          return crashed ? "after-ok" : hang.promise;
        });
        return { results, seen, after, tag: ctx.uuid() };
      },
    });
    const [first, second] = await sharedEngines(kind, [wf], [wf]);
    const worker = first!.startWorker(fast);
    await first!.start(wf, undefined, { runId: "all" });
    await waitFor(() => Object.keys(runs).length === 3);
    for (const name of order) {
      gates[name]!.resolve(`${name}-1`);
      await journaled(first!, "all", "step.completed", `${name}#0`);
    }
    await journaled(first!, "all", "step.started", "after#0");
    // The worker dies mid-step: nothing more is written by it.
    await worker.stop({ drain: false });
    crashed = true;
    second!.startWorker(fast);
    const result = (await second!.result("all", { timeoutMs: 5000 })) as { results: string[]; seen: string[]; after: string };
    expect(result.results).toEqual(["a-1", "b-1", "c-1"]);
    expect(result.seen).toEqual(order.map((n) => `${n}-1`));
    expect(result.after).toBe("after-ok");
    expect(runs).toEqual({ a: 1, b: 1, c: 1, after: 2 });
  });

  it("Promise.race replays the same winner even when the loser's outcome is journaled too", async () => {
    const slow = deferred<string>();
    const hang = deferred<string>();
    let crashed = false;
    let slowRuns = 0;
    const wf = defineWorkflow({
      name: "racer",
      async run(ctx) {
        const winner = await Promise.race([
          ctx.step("slow", async () => (slowRuns++, crashed ? "slow-again" : slow.promise)).then((v) => `step:${v}`),
          ctx.waitForEvent<string>("go").then((v) => `event:${v}`),
        ]);
        const tail = await ctx.step("tail", async () => (crashed ? "tail-ok" : hang.promise));
        return { winner, tail };
      },
    });
    const [first, second] = await sharedEngines(kind, [wf], [wf]);
    const worker = first!.startWorker(fast);
    await first!.start(wf, undefined, { runId: "race" });
    await journaled(first!, "race", "event.waiting", "go#0");
    await first!.sendEvent("race", "go", "now", { eventId: "go-1" });
    await journaled(first!, "race", "event.received", "go#0");
    slow.resolve("late");
    await journaled(first!, "race", "step.completed", "slow#0");
    await journaled(first!, "race", "step.started", "tail#0");
    await worker.stop({ drain: false });
    crashed = true;
    second!.startWorker(fast);
    expect(await second!.result("race", { timeoutMs: 5000 })).toEqual({ winner: "event:now", tail: "tail-ok" });
    expect(slowRuns).toBe(1);
  });

  it("a draining worker journals in-flight outcomes and releases the run to another worker", async () => {
    const gate = deferred<string>();
    let second = 0;
    const wf = defineWorkflow({
      name: "drain",
      async run(ctx) {
        const a = await ctx.step("a", () => gate.promise);
        const b = await ctx.step("b", () => (second++, "b"));
        return a + b;
      },
    });
    const [one, two] = await sharedEngines(kind, [wf], [wf]);
    const worker = one!.startWorker(fast);
    await one!.start(wf, undefined, { runId: "d1" });
    await journaled(one!, "d1", "step.started", "a#0");
    // stop() is called with a claim in flight (as it often is on PostgreSQL), whose answer is held
    // until the run is given back or starts its next step: draining must not wait for the claim loop.
    const store = one!.store;
    const claimRuns = store.claimRuns.bind(store);
    let claiming = false;
    const givenBackOrNext = async () => second > 0 || (await one!.journal("d1")).some((e) => e.kind === "run.released");
    store.claimRuns = async (request) => {
      const claimed = await claimRuns(request);
      claiming = true;
      await waitFor(givenBackOrNext, { what: "the run given back, or its next step started" });
      return claimed;
    };
    await waitFor(() => claiming, { what: "a claim in flight" });
    const stopping = worker.stop({ drain: true });
    gate.resolve("a");
    await stopping;
    store.claimRuns = claimRuns;
    const kinds = (await one!.journal("d1")).map((e) => e.kind);
    expect(kinds.slice(-2)).toEqual(["step.completed", "run.released"]);
    expect((await one!.journal("d1")).at(-1)!.data).toMatchObject({ stopped: true });
    expect(second).toBe(0);
    two!.startWorker(fast);
    expect(await two!.result("d1", { timeoutMs: 5000 })).toBe("ab");
    expect(second).toBe(1);
  });

  // Encrypted: the store reads run.released itself, so the payload layer must leave it readable.
  it.each([false, true])(
    "stopping workers (a rolling deploy) is no failed recovery: a run given back mid-step 3 times is not dead at maxRecoveryAttempts 1 (encrypted: %s)",
    async (encrypted) => {
      const gate = deferred<string>();
      let started = 0;
      const wf = defineWorkflow({ name: "long-step", run: (ctx) => ctx.step("slow", () => (started++, gate.promise)) });
      const codec = encrypted ? aesGcmCodec({ keys: { k: Buffer.alloc(32, 9).toString("base64") }, currentKeyId: "k" }) : null;
      const engine = await testEngine(kind, { workflows: [wf], maxRecoveryAttempts: 1, payloads: { codec } });
      await engine.start(wf, undefined, { runId: "rolled" });
      for (let deploy = 1; deploy <= 3; deploy++) {
        const worker = engine.startWorker(fast);
        await waitFor(() => started === deploy, { what: `attempt ${deploy} of the step` });
        await worker.stop({ drain: false });
        expect((await engine.getRun("rolled")).status).toBe("running");
      }
      engine.startWorker(fast);
      await waitFor(() => started === 4, { what: "the fourth attempt" });
      gate.resolve("done");
      expect(await engine.result("rolled", { timeoutMs: 5000 })).toBe("done");
    },
  );

  it("a short retry back-off waits in process, a long one is a durable timer", async () => {
    let now = Date.UTC(2030, 0, 1);
    let attempts = 0;
    const wf = defineWorkflow({
      name: "retrying",
      async run(ctx) {
        return ctx.step(
          "flaky",
          () => {
            attempts += 1;
            if (attempts < 3) throw new Error(`fail ${attempts}`);
            return `ok after ${attempts}`;
          },
          { retry: { maxAttempts: 5, initialDelay: 30, maxDelay: "1h", backoffFactor: 100 } },
        );
      },
    });
    const clockEngine = await testEngine(kind, { workflows: [wf], clock: () => now });
    clockEngine.startWorker(fast);
    await clockEngine.start(wf, undefined, { runId: "rt" });
    // First back-off (15-30 ms) waits in process; the second (1.5-3 s) suspends on a durable timer.
    const suspended = await waitFor(async () => {
      const info = await clockEngine.getRun("rt");
      return info.status === "suspended" && info;
    });
    expect(attempts).toBe(2);
    expect(suspended.waitingFor[0]).toMatchObject({ kind: "retry", opKey: "flaky#0" });
    now = suspended.wakeAt!.getTime();
    expect(await clockEngine.result("rt", { timeoutMs: 5000 })).toBe("ok after 3");
    const failed = (await clockEngine.journal("rt")).filter((x) => x.kind === "step.failed").map((x) => (x.data as { final: boolean }).final);
    expect(failed).toEqual([false, false]);
  });
});
