import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { EntryKind } from "../../core/journal.js";
import { decode, encode, type SerializedError } from "../../core/serialize.js";
import type { Store } from "../../core/store.js";
import { T0, commitOk, dataOf, entry, mustGet, newRun, reclaim, seqs, startRun, stepStarted, suspend } from "./harness.js";

/** Group commit: epoch and terminal fencing, gapless seqs, and the projection of run.* entries. */
export function commitSpec(store: () => Store): void {
  describe("commit", () => {
    it("appends with gapless seqs, the writer's epoch and the commit time", async () => {
      const run = await startRun(store(), "r1");
      const results = await store().commit(
        [{ runId: "r1", epoch: 1, entries: [stepStarted("a#0"), entry("step.completed", "a#0", { result: 42, attempt: 1 })] }],
        T0 + 10,
      );
      expect(results).toEqual([{ ok: true, firstSeq: 3, lastSeq: 4 }]);
      const appended = await store().readJournal("r1", { afterSeq: 2 });
      expect(appended).toEqual([
        { runId: "r1", seq: 3, kind: "step.started", opKey: "a#0", payload: encode({ attempt: 1 }), epoch: 1, at: T0 + 10 },
        { runId: "r1", seq: 4, kind: "step.completed", opKey: "a#0", payload: encode({ result: 42, attempt: 1 }), epoch: 1, at: T0 + 10 },
      ]);
      expect(await mustGet(store(), "r1")).toEqual({ ...run, lastSeq: 4, updatedAt: T0 + 10 });
      expect(await store().commit([{ runId: "r1", epoch: 1, entries: [stepStarted("b#0")] }], T0 + 11)).toEqual([{ ok: true, firstSeq: 5, lastSeq: 5 }]);
    });

    it("refuses a stale epoch and writes nothing", async () => {
      const run = await startRun(store(), "r1");
      expect(await store().commit([{ runId: "r1", epoch: 0, entries: [stepStarted("a#0")] }], T0 + 1)).toEqual([{ ok: false, reason: "lease-lost" }]);
      expect(await store().commit([{ runId: "r1", epoch: 2, entries: [stepStarted("a#0")] }], T0 + 1)).toEqual([{ ok: false, reason: "lease-lost" }]);
      expect(await seqs(store(), "r1")).toEqual([1, 2]);
      expect(await mustGet(store(), "r1")).toEqual(run);
    });

    it("refuses writes to an unknown run", async () => {
      expect(await store().commit([{ runId: "ghost", epoch: 0, entries: [stepStarted("a#0")] }], T0)).toEqual([{ ok: false, reason: "not-found" }]);
      expect(await store().readJournal("ghost")).toEqual([]);
    });

    it("refuses writes to a finished run, whatever the epoch", async () => {
      const run = await startRun(store(), "r1");
      await commitOk(store(), run, [entry("run.completed", null, { output: "done" })], T0 + 1);
      const finished = await mustGet(store(), "r1");
      expect(await store().commit([{ runId: "r1", epoch: 1, entries: [stepStarted("late#0")] }], T0 + 2)).toEqual([{ ok: false, reason: "finished" }]);
      expect(await store().commit([{ runId: "r1", epoch: 0, entries: [stepStarted("late#0")] }], T0 + 2)).toEqual([{ ok: false, reason: "finished" }]);
      expect(await seqs(store(), "r1")).toEqual([1, 2, 3]);
      expect(await mustGet(store(), "r1")).toEqual(finished);
    });

    it("applies each write of a batch on its own and reports results in order", async () => {
      await startRun(store(), "a");
      await startRun(store(), "b");
      await startRun(store(), "d");
      const results = await store().commit(
        [
          { runId: "a", epoch: 1, entries: [stepStarted("x#0")] },
          { runId: "b", epoch: 7, entries: [stepStarted("x#0")] },
          { runId: "c", epoch: 1, entries: [stepStarted("x#0")] },
          { runId: "d", epoch: 1, entries: [stepStarted("x#0"), stepStarted("y#0")] },
        ],
        T0 + 1,
      );
      expect(results).toEqual([
        { ok: true, firstSeq: 3, lastSeq: 3 },
        { ok: false, reason: "lease-lost" },
        { ok: false, reason: "not-found" },
        { ok: true, firstSeq: 3, lastSeq: 4 },
      ]);
      expect(await seqs(store(), "a")).toEqual([1, 2, 3]);
      expect(await seqs(store(), "b")).toEqual([1, 2]);
      expect(await seqs(store(), "d")).toEqual([1, 2, 3, 4]);
    });

    it("continues the seq across two writes to one run in one batch", async () => {
      await startRun(store(), "r1");
      const results = await store().commit(
        [
          { runId: "r1", epoch: 1, entries: [stepStarted("a#0")] },
          { runId: "r1", epoch: 1, entries: [stepStarted("b#0"), stepStarted("c#0")] },
        ],
        T0 + 1,
      );
      expect(results).toEqual([
        { ok: true, firstSeq: 3, lastSeq: 3 },
        { ok: true, firstSeq: 4, lastSeq: 5 },
      ]);
      expect((await mustGet(store(), "r1")).lastSeq).toBe(5);
    });

    it("appends step entries to held, released and suspended runs alike, in one batch", async () => {
      const a = await startRun(store(), "a");
      const b = await startRun(store(), "b");
      await commitOk(store(), b, [entry("run.released", null, { workerId: "w1" })], T0 + 1);
      const c = await startRun(store(), "c");
      await suspend(store(), c, null, T0 + 1);
      const before = await Promise.all(["a", "b", "c"].map((id) => mustGet(store(), id)));
      const results = await store().commit(
        [
          { runId: "a", epoch: a.leaseEpoch, entries: [stepStarted("x#0")] },
          { runId: "b", epoch: b.leaseEpoch, entries: [stepStarted("x#0")] },
          { runId: "c", epoch: c.leaseEpoch, entries: [stepStarted("x#0")] },
          { runId: "a", epoch: a.leaseEpoch, entries: [entry("step.completed", "x#0", { result: 1, attempt: 1 }), stepStarted("y#0")] },
        ],
        T0 + 5,
      );
      expect(results).toEqual([
        { ok: true, firstSeq: 3, lastSeq: 3 },
        { ok: true, firstSeq: 4, lastSeq: 4 },
        { ok: true, firstSeq: 4, lastSeq: 4 },
        { ok: true, firstSeq: 4, lastSeq: 5 },
      ]);
      const after = await Promise.all(["a", "b", "c"].map((id) => mustGet(store(), id)));
      expect(after).toEqual([
        { ...before[0], lastSeq: 5, updatedAt: T0 + 5 },
        { ...before[1], lastSeq: 4, updatedAt: T0 + 5 },
        { ...before[2], lastSeq: 4, updatedAt: T0 + 5 },
      ]);
      const journal = await store().readJournal("a");
      expect(journal.slice(2).map((e) => [e.seq, e.kind, e.opKey, e.epoch, e.at])).toEqual([
        [3, "step.started", "x#0", a.leaseEpoch, T0 + 5],
        [4, "step.completed", "x#0", a.leaseEpoch, T0 + 5],
        [5, "step.started", "y#0", a.leaseEpoch, T0 + 5],
      ]);
      expect(dataOf(journal[3], "step.completed")).toEqual({ result: 1, attempt: 1 });
    });

    it("a step entry then a suspension of one run in one batch: both projected, seqs continued", async () => {
      const run = await startRun(store(), "r1");
      const results = await store().commit(
        [
          { runId: "r1", epoch: run.leaseEpoch, entries: [stepStarted("a#0")] },
          { runId: "r1", epoch: run.leaseEpoch, entries: [entry("run.suspended", null, { wakeAt: T0 + 500, waitingFor: [] })] },
          { runId: "r1", epoch: run.leaseEpoch, entries: [stepStarted("b#0")] },
        ],
        T0 + 1,
      );
      expect(results).toEqual([
        { ok: true, firstSeq: 3, lastSeq: 3 },
        { ok: true, firstSeq: 4, lastSeq: 4 },
        { ok: true, firstSeq: 5, lastSeq: 5 },
      ]);
      expect(await mustGet(store(), "r1")).toMatchObject({ status: "suspended", wakeAt: T0 + 500, leaseOwner: null, lastSeq: 5, updatedAt: T0 + 1 });
      expect(await seqs(store(), "r1")).toEqual([1, 2, 3, 4, 5]);
    });

    it("fences an empty write without appending or touching the row", async () => {
      const run = await startRun(store(), "r1");
      expect(await store().commit([{ runId: "r1", epoch: 1, entries: [] }], T0 + 1)).toEqual([{ ok: true, firstSeq: 3, lastSeq: 2 }]);
      expect(await store().commit([{ runId: "r1", epoch: 0, entries: [] }], T0 + 1)).toEqual([{ ok: false, reason: "lease-lost" }]);
      expect(await mustGet(store(), "r1")).toEqual(run);
      expect(await store().commit([], T0)).toEqual([]);
    });

    it("rolls the whole batch back when a write breaks a side-table rule", async () => {
      await startRun(store(), "ok");
      const bad = await startRun(store(), "bad");
      const consume = entry("event.received", "wait#0", { type: "t", eventId: "e", payload: null, inboxId: 987_654 });
      await expect(
        store().commit(
          [
            { runId: "ok", epoch: 1, entries: [stepStarted("a#0")] },
            { runId: "bad", epoch: bad.leaseEpoch, entries: [stepStarted("a#0"), consume] },
          ],
          T0 + 1,
        ),
      ).rejects.toThrow(/987654/);
      expect(await seqs(store(), "ok")).toEqual([1, 2]);
      expect(await seqs(store(), "bad")).toEqual([1, 2]);
      expect((await mustGet(store(), "ok")).lastSeq).toBe(2);
    });

    it("keeps seqs gapless and epochs fenced under any interleaving of writers", async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(fc.record({ writer: fc.nat(2), count: fc.nat(3), takeOver: fc.boolean() }), { minLength: 1, maxLength: 12 }), async (ops) => {
          const runId = `prop-${Math.random().toString(36).slice(2)}`;
          await startRun(store(), runId);
          let now = T0;
          let current = 1;
          const epochs: number[] = [0, 1];
          for (const op of ops) {
            now += 1;
            if (op.takeOver) {
              const released = await store().commit([{ runId, epoch: current, entries: [entry("run.released", null, { workerId: "w" })] }], now);
              expect(released[0]?.ok).toBe(true);
              epochs.push(current);
              const [claimed] = await reclaim(store(), runId, now, `w${op.writer}`);
              current = claimed?.leaseEpoch ?? -1;
              epochs.push(current);
              continue;
            }
            const epoch = op.writer === 0 ? current : current - op.writer;
            const entries = Array.from({ length: op.count }, (_, i) => stepStarted(`s${i}#${now}`));
            const [result] = await store().commit([{ runId, epoch, entries }], now);
            expect(result?.ok).toBe(epoch === current);
            if (epoch === current) for (let i = 0; i < op.count; i++) epochs.push(epoch);
          }
          const journal = await store().readJournal(runId);
          expect(journal.map((e) => e.seq)).toEqual(journal.map((_, i) => i + 1));
          expect(journal.map((e) => e.epoch)).toEqual(epochs);
          expect((await mustGet(store(), runId)).lastSeq).toBe(journal.length);
        }),
        { numRuns: 15 },
      );
    });
  });

  describe("projection of run entries", () => {
    it("run.suspended: suspended, due time and waits recorded, lease released, epoch kept", async () => {
      const run = await startRun(store(), "r1");
      const waitingFor = [{ kind: "timer" as const, opKey: "nap#0", wakeAt: T0 + 1000 }];
      await commitOk(store(), run, [entry("run.suspended", null, { wakeAt: T0 + 1000, waitingFor })], T0 + 5);
      expect(await mustGet(store(), "r1")).toEqual({
        ...run,
        status: "suspended",
        wakeAt: T0 + 1000,
        waitingFor: encode(waitingFor),
        leaseOwner: null,
        leaseExpiresAt: null,
        lastSeq: 3,
        updatedAt: T0 + 5,
      });
    });

    it("run.completed: output, finishedAt, no wake-up, lease released", async () => {
      const run = await startRun(store(), "r1");
      await commitOk(store(), run, [entry("run.completed", null, { output: { answer: 42 } })], T0 + 5);
      expect(await mustGet(store(), "r1")).toEqual({
        ...run,
        status: "completed",
        output: encode({ answer: 42 }),
        wakeAt: null,
        waitingFor: null,
        leaseOwner: null,
        leaseExpiresAt: null,
        lastSeq: 3,
        updatedAt: T0 + 5,
        finishedAt: T0 + 5,
      });
    });

    it("run.failed: the serialized error, finishedAt, lease released", async () => {
      const run = await startRun(store(), "r1");
      const error: SerializedError = { name: "TypeError", message: "boom", code: "X" };
      await commitOk(store(), run, [entry("run.failed", null, { error })], T0 + 5);
      const failed = await mustGet(store(), "r1");
      expect(failed).toMatchObject({ status: "failed", error: encode(error), output: null, leaseOwner: null, leaseExpiresAt: null, finishedAt: T0 + 5 });
    });

    it("run.cancelled: a CancelledError with the reason", async () => {
      const run = await startRun(store(), "r1");
      await commitOk(store(), run, [entry("run.cancelled", null, { reason: "user asked" })], T0 + 5);
      const cancelled = await mustGet(store(), "r1");
      expect(cancelled).toMatchObject({ status: "cancelled", finishedAt: T0 + 5, leaseOwner: null });
      expect(decode(cancelled.error)).toMatchObject({ name: "CancelledError", message: "Cancelled: user asked", code: "RUN_CANCELLED" });
    });

    it("run.released: lease cleared, still running, claimable at once by another worker", async () => {
      const run = await startRun(store(), "r1");
      await commitOk(store(), run, [entry("run.released", null, { workerId: "w1" })], T0 + 5);
      expect(await mustGet(store(), "r1")).toMatchObject({ status: "running", leaseOwner: null, leaseExpiresAt: null, leaseEpoch: 1 });
      const [taken] = await reclaim(store(), "r1", T0 + 6, "w2");
      expect(taken).toMatchObject({ leaseOwner: "w2", leaseEpoch: 2 });
      expect(dataOf((await store().readJournal("r1", { afterSeq: 3 }))[0], "run.claimed")).toEqual({ workerId: "w2", epoch: 2, from: "running" });
    });

    it("run.released is refused (lease-lost) once the run suspended under that epoch; the suspension stays the last entry", async () => {
      const run = await startRun(store(), "r1");
      await commitOk(store(), run, [entry("run.suspended", null, { wakeAt: T0 + 1000, waitingFor: [] })], T0 + 5);
      const [late] = await store().commit([{ runId: "r1", epoch: run.leaseEpoch, entries: [entry("run.released", null, { workerId: "w1" })] }], T0 + 6);
      expect(late).toMatchObject({ ok: false, reason: "lease-lost" });
      expect((await store().readJournal("r1")).at(-1)?.kind).toBe("run.suspended");
      expect(await mustGet(store(), "r1")).toMatchObject({ status: "suspended", wakeAt: T0 + 1000, lastSeq: 3 });
    });

    it("other entries leave the row alone apart from lastSeq and updatedAt", async () => {
      const run = await startRun(store(), "r1");
      const kinds: EntryKind[] = [];
      const entries = [
        stepStarted("a#0"),
        entry("step.failed", "a#0", { attempt: 1, error: { name: "E", message: "m" }, final: false, retryAt: T0 + 99 }),
        entry("sleep.started", "nap#0", { wakeAt: T0 + 99 }),
        entry("value.recorded", "now#0", { value: T0 }),
        entry("event.waiting", "wait#0", { type: "t", timeoutAt: null }),
      ];
      for (const e of entries) kinds.push(e.kind);
      await commitOk(store(), run, entries, T0 + 5);
      expect(await mustGet(store(), "r1")).toEqual({ ...run, lastSeq: 2 + kinds.length, updatedAt: T0 + 5 });
    });

    it("a new run is unaffected by projections of another run's entries", async () => {
      await store().createRun(newRun("bystander"), T0);
      const run = await startRun(store(), "r1");
      await commitOk(store(), run, [entry("run.completed", null, { output: 1 })], T0 + 1);
      expect(await mustGet(store(), "bystander")).toMatchObject({ status: "pending", lastSeq: 1, wakePending: false, wakeAt: null });
    });
  });
}
