import { describe, expect, it } from "vitest";
import type { RunRecord } from "../../core/run.js";
import type { ClaimRequest, Store } from "../../core/store.js";
import { T0, WF, commitOk, dataOf, entry, mustGet, newRun, reclaim, seqs, startRun, stepStarted, suspend } from "./harness.js";

function claimReq(extra: Partial<ClaimRequest> = {}): ClaimRequest {
  return { workerId: "w1", now: T0 + 1000, leaseMs: 30_000, limit: 10, workflows: [WF], ...extra };
}

/** claimRuns, renewLeases and controlRun. */
export function leasesSpec(store: () => Store): void {
  describe("claimRuns", () => {
    it("claims a pending run: epoch + 1, lease, running, and a run.claimed entry", async () => {
      const { run } = await store().createRun(newRun("r1"), T0);
      const claimed = await store().claimRuns(claimReq({ now: T0 + 5 }));
      const expected: RunRecord = {
        ...run,
        status: "running",
        leaseOwner: "w1",
        leaseExpiresAt: T0 + 5 + 30_000,
        leaseEpoch: 1,
        lastSeq: 2,
        updatedAt: T0 + 5,
      };
      expect(claimed).toEqual([expected]);
      expect(await mustGet(store(), "r1")).toEqual(expected);
      const journal = await store().readJournal("r1");
      expect(journal[1]).toMatchObject({ seq: 2, kind: "run.claimed", opKey: null, epoch: 1, at: T0 + 5 });
      expect(dataOf(journal[1], "run.claimed")).toEqual({ workerId: "w1", epoch: 1, from: "pending" });
    });

    it("claims only the requested (workflow, version) pairs", async () => {
      await store().createRun(newRun("v1"), T0);
      await store().createRun(newRun("v2", { version: "2" }), T0);
      await store().createRun(newRun("other", { workflow: "other" }), T0);
      expect(await store().claimRuns(claimReq({ workflows: [] }))).toEqual([]);
      expect((await store().claimRuns(claimReq({ workflows: [{ name: "wf", version: "2" }] }))).map((r) => r.runId)).toEqual(["v2"]);
      expect(await store().claimRuns(claimReq({ workflows: [{ name: "other", version: "2" }] }))).toEqual([]);
      expect((await store().claimRuns(claimReq({ workflows: [{ name: "other", version: "1" }, WF] }))).map((r) => r.runId).sort()).toEqual(["other", "v1"]);
    });

    it("claims a suspended run only once it is due", async () => {
      const timer = await startRun(store(), "timer");
      await suspend(store(), timer, T0 + 100, T0 + 1);
      const waiting = await startRun(store(), "waiting");
      await suspend(store(), waiting, null, T0 + 1);
      expect(await reclaim(store(), "timer", T0 + 99)).toEqual([]);
      expect(await reclaim(store(), "waiting", T0 + 1_000_000)).toEqual([]);
      const [claimed] = await reclaim(store(), "timer", T0 + 100, "w2");
      expect(claimed).toMatchObject({ status: "running", wakeAt: null, leaseOwner: "w2", leaseEpoch: 2, lastSeq: 4 });
      expect(dataOf((await store().readJournal("timer")).at(-1), "run.claimed")).toEqual({ workerId: "w2", epoch: 2, from: "suspended" });
    });

    it("leaves finished runs and live leases alone and reclaims an expired lease", async () => {
      const live = await startRun(store(), "r1", T0, "w1");
      expect(live.leaseExpiresAt).toBe(T0 + 30_000);
      const done = await startRun(store(), "done");
      await commitOk(store(), done, [entry("run.completed", null, { output: 1 })], T0 + 1);
      expect(await reclaim(store(), "done", T0 + 10_000_000)).toEqual([]);
      expect(await reclaim(store(), "r1", T0 + 29_999, "w2")).toEqual([]);
      const [taken] = await reclaim(store(), "r1", T0 + 30_000, "w2");
      expect(taken).toMatchObject({ leaseOwner: "w2", leaseEpoch: 2, leaseExpiresAt: T0 + 60_000 });
      expect(dataOf((await store().readJournal("r1")).at(-1), "run.claimed")).toEqual({ workerId: "w2", epoch: 2, from: "running" });
      expect(await store().commit([{ runId: "r1", epoch: 1, entries: [stepStarted("late#0")] }], T0 + 30_001)).toEqual([{ ok: false, reason: "lease-lost" }]);
      expect(await store().renewLeases({ workerId: "w1", leases: [{ runId: "r1", epoch: 1 }], now: T0 + 30_001, leaseMs: 30_000 })).toEqual(["r1"]);
    });

    it("takes the oldest wake-up first (wakeAt, else createdAt), then runId, up to the limit", async () => {
      await store().createRun(newRun("pending-30"), T0 + 30);
      await store().createRun(newRun("pending-10b"), T0 + 10);
      await store().createRun(newRun("pending-10a"), T0 + 10);
      for (const [id, wakeAt] of [
        ["due-20", 20],
        ["due-5", 5],
        ["due-later", 5000],
      ] as const) {
        const held = await store().createRun(newRun(id), T0 - 100);
        const [claimed] = await store().claimRuns(claimReq({ now: T0 - 100, limit: 1, workflows: [WF] }));
        expect(claimed?.runId).toBe(held.run.runId);
        await suspend(store(), claimed as RunRecord, T0 + wakeAt, T0 - 99);
      }
      await store().createRun(newRun("expired-0"), T0);
      const [expiring] = await store().claimRuns(claimReq({ now: T0, leaseMs: 50, limit: 1 }));
      expect(expiring?.runId).toBe("expired-0");
      const order = (await store().claimRuns(claimReq({ now: T0 + 1000, limit: 2 }))).map((r) => r.runId);
      expect(order).toEqual(["expired-0", "due-5"]);
      const rest = (await store().claimRuns(claimReq({ now: T0 + 1000, limit: 10 }))).map((r) => r.runId);
      expect(rest).toEqual(["pending-10a", "pending-10b", "due-20", "pending-30"]);
    });

    it("never claims a run twice among concurrent claimers", async () => {
      for (let i = 0; i < 20; i++) await store().createRun(newRun(`r${i}`), T0 + i);
      const rounds = await Promise.all(Array.from({ length: 5 }, (_, i) => store().claimRuns(claimReq({ workerId: `w${i}`, limit: 3 }))));
      const ids = rounds.flat().map((run) => run.runId);
      expect(ids).toHaveLength(15);
      expect(new Set(ids).size).toBe(15);
      for (const run of rounds.flat()) expect(run.leaseEpoch).toBe(1);
      expect(await store().claimRuns(claimReq({ limit: 100 }))).toHaveLength(5);
      expect(await store().claimRuns(claimReq({ limit: 100 }))).toEqual([]);
    });

    it("claims nothing with limit 0", async () => {
      await store().createRun(newRun("r1"), T0);
      expect(await store().claimRuns(claimReq({ limit: 0 }))).toEqual([]);
      expect(await seqs(store(), "r1")).toEqual([1]);
    });
  });

  describe("renewLeases", () => {
    it("extends held leases and reports lost ones", async () => {
      const held = await startRun(store(), "held", T0, "w1");
      await startRun(store(), "theirs", T0, "w2");
      const stale = await startRun(store(), "stale", T0, "w1");
      await commitOk(store(), stale, [entry("run.released", null, { workerId: "w1" })], T0 + 1);
      await reclaim(store(), "stale", T0 + 2, "w1");
      const done = await startRun(store(), "done", T0, "w1");
      await commitOk(store(), done, [entry("run.completed", null, { output: 1 })], T0 + 1);
      const parked = await startRun(store(), "parked", T0, "w1");
      await suspend(store(), parked, null, T0 + 1);
      const lost = await store().renewLeases({
        workerId: "w1",
        now: T0 + 10_000,
        leaseMs: 30_000,
        leases: [
          { runId: "held", epoch: held.leaseEpoch },
          { runId: "theirs", epoch: 1 },
          { runId: "stale", epoch: 1 },
          { runId: "done", epoch: 1 },
          { runId: "parked", epoch: 1 },
          { runId: "ghost", epoch: 1 },
        ],
      });
      expect(lost).toEqual(["theirs", "stale", "done", "parked", "ghost"]);
      expect(await mustGet(store(), "held")).toMatchObject({ leaseOwner: "w1", leaseExpiresAt: T0 + 40_000, leaseEpoch: 1 });
      expect(await mustGet(store(), "theirs")).toMatchObject({ leaseOwner: "w2", leaseExpiresAt: T0 + 30_000 });
      expect(await seqs(store(), "held")).toEqual([1, 2]);
    });

    it("keeps a renewed lease from being reclaimed", async () => {
      await startRun(store(), "r1", T0, "w1");
      expect(await store().renewLeases({ workerId: "w1", now: T0 + 20_000, leaseMs: 30_000, leases: [{ runId: "r1", epoch: 1 }] })).toEqual([]);
      expect(await reclaim(store(), "r1", T0 + 40_000, "w2")).toEqual([]);
      expect(await reclaim(store(), "r1", T0 + 50_000, "w2")).toHaveLength(1);
    });
  });

  describe("controlRun", () => {
    it("throws RunNotFoundError for an unknown run", async () => {
      await expect(store().controlRun("ghost", ["running"], entry("run.cancelled", null, {}), T0)).rejects.toMatchObject({
        code: "RUN_NOT_FOUND",
        runId: "ghost",
      });
    });

    it("changes nothing when the status is not allowed", async () => {
      const run = await startRun(store(), "r1");
      const result = await store().controlRun("r1", ["failed"], entry("run.retried", null, { failedSteps: [] }), T0 + 1);
      expect(result).toEqual({ run, applied: false });
      expect(await mustGet(store(), "r1")).toEqual(run);
      expect(await seqs(store(), "r1")).toEqual([1, 2]);
    });

    it("fences out the holder: epoch + 1, lease cleared, entry at the new epoch, projected", async () => {
      const run = await startRun(store(), "r1");
      const { run: cancelled, applied } = await store().controlRun(
        "r1",
        ["pending", "running", "suspended"],
        entry("run.cancelled", null, { reason: "ops" }),
        T0 + 7,
      );
      expect(applied).toBe(true);
      expect(cancelled).toMatchObject({
        status: "cancelled",
        leaseEpoch: 2,
        leaseOwner: null,
        leaseExpiresAt: null,
        lastSeq: 3,
        finishedAt: T0 + 7,
        updatedAt: T0 + 7,
      });
      expect(cancelled).toEqual(await mustGet(store(), "r1"));
      expect((await store().readJournal("r1")).at(-1)).toMatchObject({ seq: 3, kind: "run.cancelled", epoch: 2, at: T0 + 7 });
      expect(await store().commit([{ runId: "r1", epoch: run.leaseEpoch, entries: [stepStarted("late#0")] }], T0 + 8)).toEqual([
        { ok: false, reason: "finished" },
      ]);
    });

    it("retries a failed run: pending again, error cleared, old holder fenced out", async () => {
      const run = await startRun(store(), "r1");
      await commitOk(store(), run, [entry("run.failed", null, { error: { name: "E", message: "x" } })], T0 + 1);
      const { run: retried } = await store().controlRun("r1", ["failed"], entry("run.retried", null, { failedSteps: ["a#0"] }), T0 + 2);
      expect(retried).toMatchObject({ status: "pending", error: null, finishedAt: null, wakeAt: null, leaseEpoch: 2, lastSeq: 4 });
      expect(await store().commit([{ runId: "r1", epoch: 1, entries: [stepStarted("late#0")] }], T0 + 3)).toEqual([{ ok: false, reason: "lease-lost" }]);
      const [claimed] = await reclaim(store(), "r1", T0 + 4);
      expect(claimed).toMatchObject({ leaseEpoch: 3 });
      expect(dataOf((await store().readJournal("r1")).at(-1), "run.claimed")).toEqual({ workerId: "w1", epoch: 3, from: "pending" });
    });

    it("clears the lease even when the entry itself does not, so another worker can take over at once", async () => {
      await startRun(store(), "r1", T0, "w1");
      const action = entry("step.reconciled", "pay#0", { action: "rerun", via: "human", attempt: 2 });
      const { run } = await store().controlRun("r1", ["running"], action, T0 + 1);
      expect(run).toMatchObject({ status: "running", leaseOwner: null, leaseExpiresAt: null, leaseEpoch: 2, lastSeq: 3 });
      expect(await reclaim(store(), "r1", T0 + 2, "w2")).toMatchObject([{ leaseOwner: "w2", leaseEpoch: 3 }]);
    });

    it("can release a held run for another worker, fencing the holder", async () => {
      await startRun(store(), "r1", T0, "w1");
      const { run } = await store().controlRun("r1", ["running"], entry("run.released", null, { workerId: "operator" }), T0 + 1);
      expect(run).toMatchObject({ status: "running", leaseOwner: null, leaseEpoch: 2 });
      expect(await store().commit([{ runId: "r1", epoch: 1, entries: [stepStarted("late#0")] }], T0 + 2)).toEqual([{ ok: false, reason: "lease-lost" }]);
      expect(await reclaim(store(), "r1", T0 + 2, "w2")).toMatchObject([{ leaseOwner: "w2", leaseEpoch: 3 }]);
    });
  });
}
