import { describe, expect, it } from "vitest";
import { encode } from "../../core/serialize.js";
import type { Store } from "../../core/store.js";
import { T0, WF, commitOk, dataOf, entry, mustGet, newRun, reclaim, startRun, suspend } from "./harness.js";

const SUB = { workflow: "sub", version: "2" };

/** Waking runs (events, answers, children) and child runs created from the journal. */
export function wakeSpec(store: () => Store): void {
  describe("waking a run", () => {
    it("makes a suspended run without a due time due now", async () => {
      const run = await startRun(store(), "r1");
      await suspend(store(), run, null, T0 + 1);
      expect(await reclaim(store(), "r1", T0 + 50)).toEqual([]);
      await store().sendEvent({ runId: "r1", type: "go", eventId: "e1", payload: encode(1) }, T0 + 10);
      expect(await mustGet(store(), "r1")).toMatchObject({ status: "suspended", wakeAt: T0 + 10, wakePending: false, updatedAt: T0 + 10 });
      const [claimed] = await reclaim(store(), "r1", T0 + 10);
      expect(claimed).toMatchObject({ status: "running", wakeAt: null, leaseEpoch: 2 });
      expect(dataOf((await store().readJournal("r1")).at(-1), "run.claimed")).toEqual({ workerId: "w1", epoch: 2, from: "suspended" });
    });

    it("brings a later due time forward to now and keeps an earlier one", async () => {
      const late = await startRun(store(), "late");
      await suspend(store(), late, T0 + 10_000, T0 + 1);
      const early = await startRun(store(), "early");
      await suspend(store(), early, T0 + 5, T0 + 1);
      await store().sendEvent({ runId: "late", type: "go", eventId: "e1", payload: "" }, T0 + 100);
      await store().sendEvent({ runId: "early", type: "go", eventId: "e1", payload: "" }, T0 + 100);
      expect((await mustGet(store(), "late")).wakeAt).toBe(T0 + 100);
      expect((await mustGet(store(), "early")).wakeAt).toBe(T0 + 5);
    });

    it("flags a running run, whose next suspension then wakes at once", async () => {
      const run = await startRun(store(), "r1");
      await store().sendEvent({ runId: "r1", type: "go", eventId: "e1", payload: "" }, T0 + 10);
      expect(await mustGet(store(), "r1")).toMatchObject({ status: "running", wakePending: true, wakeAt: null });
      await suspend(store(), run, T0 + 99_999, T0 + 20);
      expect(await mustGet(store(), "r1")).toMatchObject({ status: "suspended", wakeAt: T0 + 20, wakePending: false });
      expect(await reclaim(store(), "r1", T0 + 20)).toHaveLength(1);
    });

    it("flags a running run whose suspension has no due time, and keeps an earlier due time", async () => {
      const a = await startRun(store(), "a");
      await store().sendEvent({ runId: "a", type: "go", eventId: "e1", payload: "" }, T0 + 10);
      await suspend(store(), a, null, T0 + 20);
      expect(await mustGet(store(), "a")).toMatchObject({ wakeAt: T0 + 20, wakePending: false });
      const b = await startRun(store(), "b");
      await store().sendEvent({ runId: "b", type: "go", eventId: "e1", payload: "" }, T0 + 10);
      await suspend(store(), b, T0 + 3, T0 + 20);
      expect(await mustGet(store(), "b")).toMatchObject({ wakeAt: T0 + 3, wakePending: false });
    });

    it("flags a pending run; claiming clears the flag", async () => {
      await store().createRun(newRun("r1"), T0);
      await store().sendEvent({ runId: "r1", type: "go", eventId: "e1", payload: "" }, T0 + 10);
      expect(await mustGet(store(), "r1")).toMatchObject({ status: "pending", wakePending: true, wakeAt: null });
      const [claimed] = await store().claimRuns({ workerId: "w", now: T0 + 20, leaseMs: 1000, limit: 1, workflows: [WF] });
      expect(claimed).toMatchObject({ status: "running", wakePending: false });
    });

    it("does not leak a flag into a later suspension once the suspension consumed it", async () => {
      const run = await startRun(store(), "r1");
      await store().sendEvent({ runId: "r1", type: "go", eventId: "e1", payload: "" }, T0 + 10);
      await suspend(store(), run, null, T0 + 20);
      const [again] = await reclaim(store(), "r1", T0 + 30);
      await suspend(store(), again ?? run, null, T0 + 40);
      expect(await mustGet(store(), "r1")).toMatchObject({ status: "suspended", wakeAt: null, wakePending: false });
    });
  });

  describe("child runs", () => {
    it("child.started creates the child run, linked to its parent and op", async () => {
      const parent = await startRun(store(), "p");
      await commitOk(store(), parent, [entry("child.started", "sub#0", { childRunId: "c", ...SUB, input: { n: 1 } })], T0 + 5);
      const child = await mustGet(store(), "c");
      expect(child).toMatchObject({
        runId: "c",
        ...SUB,
        status: "pending",
        input: encode({ n: 1 }),
        parentRunId: "p",
        parentOpKey: "sub#0",
        leaseEpoch: 0,
        lastSeq: 1,
        createdAt: T0 + 5,
      });
      const journal = await store().readJournal("c");
      expect(journal).toHaveLength(1);
      expect(journal[0]).toMatchObject({ seq: 1, epoch: 0, at: T0 + 5 });
      expect(dataOf(journal[0], "run.created")).toEqual({ ...SUB, input: { n: 1 }, parentRunId: "p", parentOpKey: "sub#0" });
      const [claimed] = await store().claimRuns({ workerId: "w", now: T0 + 6, leaseMs: 1000, limit: 5, workflows: [{ name: "sub", version: "2" }] });
      expect(claimed?.runId).toBe("c");
    });

    it("child.started leaves an existing run with that id untouched", async () => {
      const existing = await store().createRun(newRun("c", { input: encode("mine") }), T0);
      const parent = await startRun(store(), "p");
      await commitOk(store(), parent, [entry("child.started", "sub#0", { childRunId: "c", ...SUB, input: "theirs" })], T0 + 5);
      expect(await mustGet(store(), "c")).toEqual(existing.run);
      expect(await store().readJournal("c")).toHaveLength(1);
    });

    it("a child's completion wakes its suspended parent", async () => {
      const parent = await startRun(store(), "p");
      await commitOk(store(), parent, [entry("child.started", "sub#0", { childRunId: "c", ...SUB, input: null })], T0 + 1);
      await suspend(store(), parent, null, T0 + 2);
      const [child] = await store().claimRuns({ workerId: "w2", now: T0 + 3, leaseMs: 1000, limit: 1, workflows: [{ name: "sub", version: "2" }] });
      await commitOk(store(), child ?? { runId: "c", leaseEpoch: 1 }, [entry("run.completed", null, { output: "ok" })], T0 + 50);
      expect(await mustGet(store(), "p")).toMatchObject({ status: "suspended", wakeAt: T0 + 50 });
      expect(await reclaim(store(), "p", T0 + 50)).toHaveLength(1);
    });

    it("a batch that finishes a child and then suspends its parent leaves the parent due at once", async () => {
      const parent = await startRun(store(), "p");
      await commitOk(store(), parent, [entry("child.started", "sub#0", { childRunId: "c", ...SUB, input: null })], T0 + 1);
      const [child] = await store().claimRuns({ workerId: "w2", now: T0 + 2, leaseMs: 1000, limit: 1, workflows: [{ name: "sub", version: "2" }] });
      const results = await store().commit(
        [
          { runId: "c", epoch: child?.leaseEpoch ?? -1, entries: [entry("run.completed", null, { output: 1 })] },
          { runId: "p", epoch: parent.leaseEpoch, entries: [entry("run.suspended", null, { wakeAt: null, waitingFor: [] })] },
        ],
        T0 + 3,
      );
      expect(results.map((result) => result.ok)).toEqual([true, true]);
      expect(await mustGet(store(), "p")).toMatchObject({ status: "suspended", wakeAt: T0 + 3, wakePending: false, lastSeq: 4 });
    });

    it("a batch with step entries of a running parent around its child's completion keeps both in the parent's row", async () => {
      const parent = await startRun(store(), "p");
      await commitOk(store(), parent, [entry("child.started", "sub#0", { childRunId: "c", ...SUB, input: null })], T0 + 1);
      const [child] = await store().claimRuns({ workerId: "w2", now: T0 + 2, leaseMs: 1000, limit: 1, workflows: [{ name: "sub", version: "2" }] });
      const before = await mustGet(store(), "p");
      const step = (name: string) => entry("step.started", name, { attempt: 1 });
      const results = await store().commit(
        [
          { runId: "p", epoch: parent.leaseEpoch, entries: [step("a#0")] },
          { runId: "c", epoch: child?.leaseEpoch ?? -1, entries: [entry("run.completed", null, { output: 1 })] },
          { runId: "p", epoch: parent.leaseEpoch, entries: [step("b#0")] },
          { runId: "p", epoch: parent.leaseEpoch, entries: [step("c#0")] },
        ],
        T0 + 3,
      );
      expect(results.map((result) => result.ok && result.firstSeq)).toEqual([4, 3, 5, 6]);
      expect(await mustGet(store(), "p")).toEqual({ ...before, wakePending: true, lastSeq: 6, updatedAt: T0 + 3 });
    });

    it("a batch that suspends a parent and then finishes its child wakes the parent", async () => {
      const parent = await startRun(store(), "p");
      await commitOk(store(), parent, [entry("child.started", "sub#0", { childRunId: "c", ...SUB, input: null })], T0 + 1);
      const [child] = await store().claimRuns({ workerId: "w2", now: T0 + 2, leaseMs: 1000, limit: 1, workflows: [{ name: "sub", version: "2" }] });
      await store().commit(
        [
          { runId: "p", epoch: parent.leaseEpoch, entries: [entry("run.suspended", null, { wakeAt: T0 + 99_999, waitingFor: [] })] },
          { runId: "c", epoch: child?.leaseEpoch ?? -1, entries: [entry("run.completed", null, { output: 1 })] },
        ],
        T0 + 3,
      );
      expect(await mustGet(store(), "p")).toMatchObject({ status: "suspended", wakeAt: T0 + 3, wakePending: false, updatedAt: T0 + 3 });
    });

    it("a batch can create a child and have it finish in the same commit", async () => {
      const parent = await startRun(store(), "p");
      const results = await store().commit(
        [
          { runId: "p", epoch: parent.leaseEpoch, entries: [entry("child.started", "sub#0", { childRunId: "c", ...SUB, input: null })] },
          { runId: "c", epoch: 0, entries: [entry("run.cancelled", null, { reason: "at once" })] },
        ],
        T0 + 3,
      );
      expect(results).toEqual([
        { ok: true, firstSeq: 3, lastSeq: 3 },
        { ok: true, firstSeq: 2, lastSeq: 2 },
      ]);
      expect(await mustGet(store(), "c")).toMatchObject({ status: "cancelled", lastSeq: 2 });
      expect(await mustGet(store(), "p")).toMatchObject({ status: "running", wakePending: true });
    });

    it("a child's failure while the parent runs flags the parent", async () => {
      const parent = await startRun(store(), "p");
      await commitOk(store(), parent, [entry("child.started", "sub#0", { childRunId: "c", ...SUB, input: null })], T0 + 1);
      const [child] = await store().claimRuns({ workerId: "w2", now: T0 + 3, leaseMs: 1000, limit: 1, workflows: [{ name: "sub", version: "2" }] });
      await commitOk(store(), child ?? { runId: "c", leaseEpoch: 1 }, [entry("run.failed", null, { error: { name: "E", message: "x" } })], T0 + 4);
      expect(await mustGet(store(), "p")).toMatchObject({ status: "running", wakePending: true });
      await suspend(store(), parent, null, T0 + 9);
      expect(await mustGet(store(), "p")).toMatchObject({ status: "suspended", wakeAt: T0 + 9, wakePending: false });
    });

    it("a child cancelled by an operator wakes its parent", async () => {
      const parent = await startRun(store(), "p");
      await commitOk(store(), parent, [entry("child.started", "sub#0", { childRunId: "c", ...SUB, input: null })], T0 + 1);
      await suspend(store(), parent, null, T0 + 2);
      const { applied } = await store().controlRun("c", ["pending", "running", "suspended"], entry("run.cancelled", null, { reason: "stop" }), T0 + 30);
      expect(applied).toBe(true);
      expect(await mustGet(store(), "p")).toMatchObject({ wakeAt: T0 + 30 });
    });

    it("a finished child leaves a finished parent alone", async () => {
      const parent = await startRun(store(), "p");
      await commitOk(
        store(),
        parent,
        [entry("child.started", "sub#0", { childRunId: "c", ...SUB, input: null }), entry("run.completed", null, { output: 1 })],
        T0 + 1,
      );
      const finishedParent = await mustGet(store(), "p");
      await store().controlRun("c", ["pending"], entry("run.cancelled", null, {}), T0 + 30);
      expect(await mustGet(store(), "p")).toEqual(finishedParent);
    });

    it("a run without a parent finishes without waking anything", async () => {
      await store().createRun(newRun("bystander"), T0);
      const run = await startRun(store(), "r1");
      await commitOk(store(), run, [entry("run.completed", null, { output: 1 })], T0 + 1);
      expect(await mustGet(store(), "bystander")).toMatchObject({ wakePending: false, wakeAt: null });
    });
  });
}
