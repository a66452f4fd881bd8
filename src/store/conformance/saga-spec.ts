import { describe, expect, it } from "vitest";
import { decode } from "../../core/serialize.js";
import type { Store } from "../../core/store.js";
import { T0, commitOk, entry, mustGet, reclaim, startRun, suspend } from "./harness.js";

const SUB = { workflow: "sub", version: "2" };
const CAUSE = { name: "Error", message: "card declined" };

/** Sagas: the run-level entries of compensation and cancellation-with-cleanup, as every store projects them. */
export function sagaSpec(store: () => Store): void {
  describe("sagas", () => {
    it("run.compensated and run.compensation_failed end the run with their error and free the lease", async () => {
      const a = await startRun(store(), "a");
      await commitOk(
        store(),
        a,
        [entry("saga.compensating", null, { reason: "failed", error: CAUSE }), entry("compensation.started", "x#0", { attempt: 1 })],
        T0 + 1,
      );
      expect(await mustGet(store(), "a")).toMatchObject({ status: "running", lastSeq: 4 });
      await commitOk(store(), a, [entry("compensation.completed", "x#0", { attempt: 1 }), entry("run.compensated", null, { error: CAUSE })], T0 + 2);
      const done = await mustGet(store(), "a");
      expect(done).toMatchObject({ status: "compensated", finishedAt: T0 + 2, leaseOwner: null, lastSeq: 6 });
      expect(decode(done.error)).toEqual(CAUSE);

      const b = await startRun(store(), "b");
      const failure = { name: "CompensationFailedError", message: 'Compensation of step "x#0" failed after 3 attempts', opKey: "x#0" };
      await commitOk(store(), b, [entry("run.compensation_failed", null, { error: failure, cause: CAUSE })], T0 + 3);
      const failed = await mustGet(store(), "b");
      expect(failed).toMatchObject({ status: "compensation_failed", finishedAt: T0 + 3, leaseOwner: null });
      expect(decode(failed.error)).toEqual(failure);
      // Terminal: the old holder can write nothing more.
      const [result] = await store().commit([{ runId: "b", epoch: b.leaseEpoch, entries: [entry("compensation.started", "y#0", { attempt: 1 })] }], T0 + 4);
      expect(result?.ok).toBe(false);
    });

    it("run.cancelling (by controlRun) fences the holder out and makes the run claimable again; retry reopens compensation_failed", async () => {
      const run = await startRun(store(), "r");
      await suspend(store(), run, null, T0 + 1);
      const { run: cancelling, applied } = await store().controlRun(
        "r",
        ["pending", "running", "suspended"],
        entry("run.cancelling", null, { reason: "stop" }),
        T0 + 2,
      );
      expect(applied).toBe(true);
      expect(cancelling).toMatchObject({ status: "pending", wakeAt: null, leaseOwner: null, finishedAt: null, leaseEpoch: run.leaseEpoch + 1 });
      const [claimed] = await reclaim(store(), "r", T0 + 3);
      expect(claimed).toMatchObject({ status: "running", leaseEpoch: run.leaseEpoch + 2 });
      await commitOk(store(), claimed!, [entry("run.compensation_failed", null, { error: CAUSE, cause: CAUSE })], T0 + 4);
      const { run: retried } = await store().controlRun("r", ["failed", "compensation_failed"], entry("run.retried", null, { failedSteps: [] }), T0 + 5);
      expect(retried).toMatchObject({ status: "pending", error: null, finishedAt: null });
    });

    it("a child that ends compensated or compensation_failed wakes its suspended parent", async () => {
      for (const [i, kind] of (["run.compensated", "run.compensation_failed"] as const).entries()) {
        const parentId = `p${i}`;
        const childId = `c${i}`;
        const parent = await startRun(store(), parentId);
        await commitOk(store(), parent, [entry("child.started", "sub#0", { childRunId: childId, ...SUB, input: null })], T0 + 1);
        await suspend(store(), parent, null, T0 + 2);
        const [child] = await store().claimRuns({ workerId: "w2", now: T0 + 3, leaseMs: 1000, limit: 1, workflows: [{ name: "sub", version: "2" }] });
        expect(child?.runId).toBe(childId);
        const data = kind === "run.compensated" ? { error: CAUSE } : { error: CAUSE, cause: CAUSE };
        await commitOk(store(), child!, [entry(kind, null, data as never)], T0 + 50);
        expect(await mustGet(store(), parentId)).toMatchObject({ status: "suspended", wakeAt: T0 + 50 });
      }
    });
  });
}
