import { describe, expect, it } from "vitest";
import type { RunRecord } from "../../core/run.js";
import { encode } from "../../core/serialize.js";
import type { Store, WorkerRecord } from "../../core/store.js";
import { T0, WF, commitOk, entry, mustGet, newRun, reclaim, startRun, suspend } from "./harness.js";

function worker(workerId: string, heartbeatAt: number, extra: Partial<WorkerRecord> = {}): WorkerRecord {
  return { workerId, host: "host-a", pid: 4242, workflows: ["wf@1", "other@2"], runsHeld: 3, startedAt: T0 - 1000, heartbeatAt, ...extra };
}

const GRACE = 60_000;

/** The worker registry (upsertWorker, removeWorker, listWorkers) and listStuckRuns. */
export function workersSpec(store: () => Store): void {
  describe("worker registry", () => {
    it("lists workers seen after `since`, newest heartbeat first, ties by workerId", async () => {
      await store().upsertWorker(worker("w-old", T0));
      await store().upsertWorker(worker("w-b", T0 + 20));
      await store().upsertWorker(worker("w-a", T0 + 20));
      await store().upsertWorker(worker("w-new", T0 + 30, { workflows: [], runsHeld: 0 }));
      expect(await store().listWorkers(T0 - 1)).toEqual([
        worker("w-new", T0 + 30, { workflows: [], runsHeld: 0 }),
        worker("w-a", T0 + 20),
        worker("w-b", T0 + 20),
        worker("w-old", T0),
      ]);
      expect((await store().listWorkers(T0)).map((w) => w.workerId)).toEqual(["w-new", "w-a", "w-b"]);
      expect(await store().listWorkers(T0 + 30)).toEqual([]);
    });

    it("refreshes a worker on upsert instead of adding another", async () => {
      await store().upsertWorker(worker("w1", T0));
      const refreshed = worker("w1", T0 + 5000, { host: "host-b", pid: 7, workflows: ["wf@2"], runsHeld: 9, startedAt: T0 - 5 });
      await store().upsertWorker(refreshed);
      expect(await store().listWorkers(0)).toEqual([refreshed]);
    });

    it("forgets a removed worker; removing an unknown one is a no-op", async () => {
      await store().upsertWorker(worker("w1", T0));
      await store().upsertWorker(worker("w2", T0));
      await store().removeWorker("w1");
      await store().removeWorker("ghost");
      expect((await store().listWorkers(0)).map((w) => w.workerId)).toEqual(["w2"]);
    });

    it("hands out copies", async () => {
      await store().upsertWorker(worker("w1", T0));
      const [listed] = await store().listWorkers(0);
      listed?.workflows.push("mutated@1");
      expect((await store().listWorkers(0))[0]?.workflows).toEqual(["wf@1", "other@2"]);
    });
  });

  describe("listStuckRuns", () => {
    const stuckIds = async (now: number, limit?: number) => (await store().listStuckRuns(now, GRACE, limit)).map((run) => run.runId);

    it("lists a suspension that waits for nothing at once, but not one waiting for an event or a time", async () => {
      const lost = await startRun(store(), "lost");
      await suspend(store(), lost, null, T0 + 1);
      const waiting = await startRun(store(), "waiting");
      await commitOk(
        store(),
        waiting,
        [entry("run.suspended", null, { wakeAt: null, waitingFor: [{ kind: "event", opKey: "e#0", type: "go", timeoutAt: null }] })],
        T0 + 1,
      );
      const timer = await startRun(store(), "timer");
      await suspend(store(), timer, T0 + 1_000_000, T0 + 1);
      expect(await stuckIds(T0 + 2)).toEqual(["lost"]);
      expect(await stuckIds(T0 + 900_000)).toEqual(["lost"]);
    });

    it("lists a pending run only once it waited longer than the grace period", async () => {
      await store().createRun(newRun("p"), T0);
      expect(await stuckIds(T0 + GRACE)).toEqual([]);
      expect(await stuckIds(T0 + GRACE + 1)).toEqual(["p"]);
      await store().claimRuns({ workerId: "w", now: T0 + GRACE + 2, leaseMs: 1000, limit: 1, workflows: [WF] });
      expect(await stuckIds(T0 + GRACE + 3)).toEqual([]);
    });

    it("measures a retried run from its retry, not its creation", async () => {
      const run = await startRun(store(), "r1");
      await commitOk(store(), run, [entry("run.failed", null, { error: { name: "E", message: "x" } })], T0 + 1);
      expect(await stuckIds(T0 + 10 * GRACE)).toEqual([]);
      await store().controlRun("r1", ["failed"], entry("run.retried", null, { failedSteps: [] }), T0 + 10 * GRACE);
      expect(await stuckIds(T0 + 11 * GRACE)).toEqual([]);
      expect(await stuckIds(T0 + 11 * GRACE + 1)).toEqual(["r1"]);
    });

    it("lists a due suspension nobody claimed for longer than the grace period", async () => {
      const run = await startRun(store(), "r1");
      await suspend(store(), run, T0 + 100, T0 + 1);
      expect(await stuckIds(T0 + 100 + GRACE)).toEqual([]);
      expect(await stuckIds(T0 + 101 + GRACE)).toEqual(["r1"]);
      await reclaim(store(), "r1", T0 + 102 + GRACE);
      expect(await stuckIds(T0 + 103 + GRACE)).toEqual([]);
    });

    it("lists a run whose lease expired, or was released, longer than the grace period ago", async () => {
      const held = await startRun(store(), "held");
      expect(held.leaseExpiresAt).toBe(T0 + 30_000);
      const released = await startRun(store(), "released");
      await commitOk(store(), released, [entry("run.released", null, { workerId: "w1" })], T0 + 10);
      expect(await stuckIds(T0 + 10 + GRACE)).toEqual([]);
      expect(await stuckIds(T0 + 11 + GRACE)).toEqual(["released"]);
      expect(await stuckIds(T0 + 30_000 + GRACE)).toEqual(["released"]);
      expect(await stuckIds(T0 + 30_001 + GRACE)).toEqual(["held", "released"]);
      await store().renewLeases({ workerId: "w1", leases: [{ runId: "held", epoch: 1 }], now: T0 + 30_001 + GRACE, leaseMs: 30_000 });
      expect(await stuckIds(T0 + 30_002 + GRACE)).toEqual(["released"]);
    });

    it("never lists finished runs", async () => {
      for (const [id, kind] of [
        ["done", "run.completed"],
        ["failed", "run.failed"],
        ["cancelled", "run.cancelled"],
      ] as const) {
        const run = await startRun(store(), id);
        const data = kind === "run.completed" ? { output: 1 } : kind === "run.failed" ? { error: { name: "E", message: "m" } } : {};
        await commitOk(store(), run, [entry(kind, null, data as never)], T0 + 1);
      }
      expect(await stuckIds(T0 + 1000 * GRACE)).toEqual([]);
    });

    it("returns whole rows, oldest first (createdAt, then runId), up to the limit", async () => {
      await store().createRun(newRun("b", { input: encode({ big: "x".repeat(100) }) }), T0);
      await store().createRun(newRun("a"), T0);
      await store().createRun(newRun("c"), T0 - 5);
      const lost = await startRun(store(), "lost", T0 + 1);
      await suspend(store(), lost, null, T0 + 2);
      const now = T0 + GRACE + 10;
      const stuck = await store().listStuckRuns(now, GRACE);
      expect(stuck.map((run) => run.runId)).toEqual(["c", "a", "b", "lost"]);
      const expected: RunRecord[] = [];
      for (const id of ["c", "a", "b", "lost"]) expected.push(await mustGet(store(), id));
      expect(stuck).toEqual(expected);
      expect(await stuckIds(now, 2)).toEqual(["c", "a"]);
      await expect(store().listStuckRuns(now, GRACE, 0)).rejects.toMatchObject({ code: "INVALID_INPUT" });
    });
  });
}
