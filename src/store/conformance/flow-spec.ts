import { describe, expect, it } from "vitest";
import type { QueueLimits, RunFlow } from "../../core/flow-control.js";
import { newEntry } from "../../core/journal.js";
import type { RunRecord } from "../../core/run.js";
import type { ClaimRequest, Store } from "../../core/store.js";
import { decode, encode } from "../../core/serialize.js";
import { T0, WF, commitOk, dataOf, mustGet, newRun, suspend } from "./harness.js";

const limits = (extra: Partial<QueueLimits> = {}): QueueLimits => ({ name: "q", concurrency: null, perKeyConcurrency: null, rateLimit: null, ...extra });

function claimReq(queues: QueueLimits[] | undefined, extra: Partial<ClaimRequest> = {}): ClaimRequest {
  return { workerId: "w1", now: T0 + 1000, leaseMs: 30_000, limit: 10, workflows: [WF], ...(queues ? { queues } : {}), ...extra };
}

const flow = (extra: Partial<RunFlow> = {}): RunFlow => ({ queue: "q", concurrencyKey: null, priority: 0, ...extra });
const ids = (runs: RunRecord[]) => runs.map((run) => run.runId).sort();
const complete = (store: Store, run: RunRecord, now: number) => commitOk(store, run, [newEntry("run.completed", null, { output: null })], now);

/** Flow control: queued claims under global, per-key and rate limits, priorities, and slots freed by suspension. */
export function flowSpec(store: () => Store): void {
  describe("claimRuns with queues", () => {
    it("leaves queued runs to claims that name their queue", async () => {
      await store().createRun(newRun("plain"), T0);
      await store().createRun(newRun("queued", { flow: flow() }), T0);
      expect(ids(await store().claimRuns(claimReq(undefined)))).toEqual(["plain"]);
      expect(await store().claimRuns(claimReq([limits({ name: "other" })]))).toEqual([]);
      expect(ids(await store().claimRuns(claimReq([limits()])))).toEqual(["queued"]);
    });

    it("never runs more than the queue's concurrency, and frees a slot when a run finishes", async () => {
      await store().createRuns(
        ["a", "b", "c", "d"].map((id) => newRun(id, { flow: flow() })),
        T0,
      );
      const q = [limits({ concurrency: 2 })];
      const first = await store().claimRuns(claimReq(q));
      expect(ids(first)).toEqual(["a", "b"]);
      expect(await store().claimRuns(claimReq(q, { workerId: "w2" }))).toEqual([]);
      await complete(store(), first[0]!, T0 + 2000);
      expect(ids(await store().claimRuns(claimReq(q, { now: T0 + 2001 })))).toEqual(["c"]);
    });

    it("never runs more than perKeyConcurrency per key; runs without a key only count globally", async () => {
      const runs = [
        newRun("a1", { flow: flow({ concurrencyKey: "a" }) }),
        newRun("a2", { flow: flow({ concurrencyKey: "a" }) }),
        newRun("a3", { flow: flow({ concurrencyKey: "a" }) }),
        newRun("b1", { flow: flow({ concurrencyKey: "b" }) }),
        newRun("n1", { flow: flow() }),
      ];
      for (const [i, run] of runs.entries()) await store().createRun(run, T0 + i);
      const q = [limits({ perKeyConcurrency: 2 })];
      expect(ids(await store().claimRuns(claimReq(q)))).toEqual(["a1", "a2", "b1", "n1"]);
      expect(await store().claimRuns(claimReq(q))).toEqual([]);
      await complete(store(), await mustGet(store(), "a1"), T0 + 2000);
      expect(ids(await store().claimRuns(claimReq(q, { now: T0 + 2001 })))).toEqual(["a3"]);
    });

    it("a suspended run frees its slot and needs one again when it wakes", async () => {
      await store().createRun(newRun("waiter", { flow: flow() }), T0);
      await store().createRun(newRun("next", { flow: flow() }), T0 + 1);
      const q = [limits({ concurrency: 1 })];
      const [waiter] = await store().claimRuns(claimReq(q));
      expect(waiter?.runId).toBe("waiter");
      await suspend(store(), waiter!, null, T0 + 1100);
      const [next] = await store().claimRuns(claimReq(q, { now: T0 + 1200 }));
      expect(next?.runId).toBe("next");
      await store().sendEvent({ runId: "waiter", type: "go", eventId: "e1", payload: "null" }, T0 + 1300);
      expect((await mustGet(store(), "waiter")).wakeAt).not.toBeNull();
      expect(await store().claimRuns(claimReq(q, { now: T0 + 1400 }))).toEqual([]);
      await complete(store(), next!, T0 + 1500);
      expect(ids(await store().claimRuns(claimReq(q, { now: T0 + 1600 })))).toEqual(["waiter"]);
    });

    it("claims higher priorities first, FIFO within a priority", async () => {
      const order = [
        ["low", 0],
        ["high1", 5],
        ["neg", -3],
        ["high2", 5],
        ["mid", 1],
      ] as const;
      for (const [i, [id, priority]] of order.entries()) await store().createRun(newRun(id, { flow: flow({ priority }) }), T0 + i);
      const claimed: string[] = [];
      for (let i = 0; i < order.length; i++) claimed.push(...ids(await store().claimRuns(claimReq([limits()], { limit: 1 }))));
      expect(claimed).toEqual(["high1", "high2", "mid", "low", "neg"]);
    });

    it("starts at most rateLimit.limit runs in any window of rateLimit.per", async () => {
      await store().createRuns(
        ["r1", "r2", "r3", "r4", "r5"].map((id) => newRun(id, { flow: flow() })),
        T0,
      );
      const q = [limits({ rateLimit: { limit: 2, perMs: 1000 } })];
      const first = await store().claimRuns(claimReq(q, { now: T0 + 10 }));
      expect(first).toHaveLength(2);
      for (const run of first) await complete(store(), run, T0 + 20);
      expect(await store().claimRuns(claimReq(q, { now: T0 + 1009 }))).toEqual([]);
      expect(await store().claimRuns(claimReq(q, { now: T0 + 1010 }))).toHaveLength(2);
    });

    it("a wake-up is not a start: suspended runs resume within the rate limit", async () => {
      await store().createRun(newRun("s1", { flow: flow() }), T0);
      const q = [limits({ rateLimit: { limit: 1, perMs: 60_000 } })];
      const [run] = await store().claimRuns(claimReq(q, { now: T0 + 10 }));
      await suspend(store(), run!, T0 + 100, T0 + 20);
      expect(ids(await store().claimRuns(claimReq(q, { now: T0 + 200 })))).toEqual(["s1"]);
    });

    it("reclaims a queued run whose lease expired without a free slot (it still holds its own)", async () => {
      await store().createRun(newRun("held", { flow: flow() }), T0);
      const q = [limits({ concurrency: 1 })];
      const [held] = await store().claimRuns(claimReq(q, { now: T0, leaseMs: 100 }));
      expect(held?.runId).toBe("held");
      expect(ids(await store().claimRuns(claimReq(q, { now: T0 + 200, workerId: "w2" })))).toEqual(["held"]);
    });

    it("concurrent claims never take more than the free slots, round after round", async () => {
      await store().createRuns(
        Array.from({ length: 40 }, (_, i) => newRun(`c${String(i).padStart(2, "0")}`, { flow: flow({ concurrencyKey: `k${i % 3}` }) })),
        T0,
      );
      const q = [limits({ concurrency: 5, perKeyConcurrency: 2 })];
      for (let round = 0; round < 8; round++) {
        const now = T0 + 1000 + round * 10;
        const results = await Promise.all(Array.from({ length: 8 }, (_, i) => store().claimRuns(claimReq(q, { workerId: `w${i}`, limit: 3, now }))));
        const claimed = results.flat();
        expect(claimed, `round ${round}`).toHaveLength(5);
        expect(new Set(claimed.map((run) => run.runId)).size).toBe(5);
        const { runs } = await store().listRuns({ status: ["running"] });
        expect(runs, `round ${round}`).toHaveLength(5);
        for (const run of claimed) await complete(store(), run, now + 5);
      }
    });
  });

  describe("debounceRun", () => {
    it("creates a run that starts after the period, then coalesces later starts into it (last input wins)", async () => {
      const first = await store().debounceRun(newRun("d1", { input: encode({ v: 1 }) }), "doc", T0 + 500, T0);
      expect(first).toMatchObject({ created: true, run: { runId: "d1", status: "suspended", wakeAt: T0 + 500, leaseEpoch: 0, lastSeq: 2 } });
      const second = await store().debounceRun(newRun("d2", { input: encode({ v: 2 }) }), "doc", T0 + 900, T0 + 400);
      expect(second).toMatchObject({ created: false, run: { runId: "d1", wakeAt: T0 + 900, lastSeq: 3 } });
      expect(decode(second.run.input)).toEqual({ v: 2 });
      expect(await store().getRun("d2")).toBeUndefined();
      const journal = await store().readJournal("d1");
      expect(journal.map((e) => e.kind)).toEqual(["run.created", "run.debounced", "run.debounced"]);
      expect(dataOf(journal[2], "run.debounced")).toEqual({ input: { v: 2 }, startAt: T0 + 900 });
      expect(await store().claimRuns(claimReq(undefined, { now: T0 + 899 }))).toEqual([]);
      const [claimed] = await store().claimRuns(claimReq(undefined, { now: T0 + 900 }));
      expect(claimed).toMatchObject({ runId: "d1", status: "running", leaseEpoch: 1 });
      expect(decode(claimed!.input)).toEqual({ v: 2 });
      // Started: the next start with the key makes a new run.
      const third = await store().debounceRun(newRun("d3"), "doc", T0 + 2000, T0 + 1000);
      expect(third).toMatchObject({ created: true, run: { runId: "d3" } });
      // Keys are per workflow.
      expect((await store().debounceRun(newRun("o1", { workflow: "other" }), "doc", T0 + 2000, T0 + 1000)).created).toBe(true);
    });

    it("debounced runs join their queue", async () => {
      await store().debounceRun(newRun("dq", { flow: flow() }), "k", T0 + 10, T0);
      expect(await store().claimRuns(claimReq(undefined, { now: T0 + 20 }))).toEqual([]);
      const q = [limits({ rateLimit: { limit: 1, perMs: 10_000 } })];
      expect(ids(await store().claimRuns(claimReq(q, { now: T0 + 20 })))).toEqual(["dq"]);
      // Its first claim was a start: the rate limit is used up.
      await store().debounceRun(newRun("dq2", { flow: flow() }), "k", T0 + 30, T0 + 25);
      expect(await store().claimRuns(claimReq(q, { now: T0 + 40 }))).toEqual([]);
    });

    it("concurrent debounced starts with one key create one run", async () => {
      const results = await Promise.all(Array.from({ length: 10 }, (_, i) => store().debounceRun(newRun(`c${i}`), "same", T0 + 100, T0)));
      expect(results.filter((r) => r.created)).toHaveLength(1);
      expect(new Set(results.map((r) => r.run.runId)).size).toBe(1);
      expect((await store().readJournal(results[0]!.run.runId)).map((e) => e.kind)).toEqual(["run.created", ...Array(10).fill("run.debounced")]);
    });
  });

  describe("queueStats", () => {
    it("counts running, waiting (pending or due) and suspended runs per queue and key; finished and unqueued runs are left out", async () => {
      await store().createRun(newRun("plain"), T0);
      await store().createRun(newRun("a-run", { flow: flow({ concurrencyKey: "a" }) }), T0);
      await store().createRun(newRun("a-wait", { flow: flow({ concurrencyKey: "a" }) }), T0 + 1);
      await store().createRun(newRun("nokey", { flow: flow() }), T0 + 2);
      await store().createRun(newRun("z-sleep", { flow: flow({ queue: "z", concurrencyKey: "s" }) }), T0 + 3);
      await store().createRun(newRun("z-done", { flow: flow({ queue: "z" }) }), T0 + 4);
      const q = [limits({ perKeyConcurrency: 1, concurrency: 1 }), limits({ name: "z" })];
      expect(ids(await store().claimRuns(claimReq(q, { limit: 1 })))).toEqual(["plain"]);
      expect(ids(await store().claimRuns(claimReq(q)))).toEqual(["a-run", "z-done", "z-sleep"]);
      await suspend(store(), await mustGet(store(), "z-sleep"), T0 + 5000, T0 + 1100);
      await complete(store(), await mustGet(store(), "z-done"), T0 + 1100);
      expect(await store().queueStats(T0 + 1200)).toEqual([
        { queue: "q", concurrencyKey: null, running: 0, waiting: 1, suspended: 0 },
        { queue: "q", concurrencyKey: "a", running: 1, waiting: 1, suspended: 0 },
        { queue: "z", concurrencyKey: "s", running: 0, waiting: 0, suspended: 1 },
      ]);
      expect((await store().queueStats(T0 + 6000)).at(-1)).toEqual({ queue: "z", concurrencyKey: "s", running: 0, waiting: 1, suspended: 0 });
    });
  });
}
