import { describe, expect, it } from "vitest";
import { decode } from "../../core/serialize.js";
import type { ClaimRequest, Store } from "../../core/store.js";
import { T0, WF, commitOk, dataOf, entry, mustGet, newRun, stepStarted, suspend } from "./harness.js";

const LEASE = 30_000;

/** A claim for `wf@1` with a dead-letter limit. */
function claim(workerId: string, now: number, maxRecoveryAttempts?: number): ClaimRequest {
  return { workerId, now, leaseMs: LEASE, limit: 10, workflows: [WF], ...(maxRecoveryAttempts === undefined ? {} : { maxRecoveryAttempts }) };
}

/** countVersions, drained versions, and the dead-letter check at claim time. */
export function deploysSpec(store: () => Store): void {
  describe("countVersions", () => {
    it("counts runs per workflow, version and status, in order", async () => {
      expect(await store().countVersions()).toEqual([]);
      await store().createRun(newRun("a", { workflow: "research", version: "1" }), T0);
      await store().createRun(newRun("b", { workflow: "research", version: "1" }), T0);
      await store().createRun(newRun("c", { workflow: "research", version: "2" }), T0);
      await store().createRun(newRun("d", { workflow: "approval", version: "1" }), T0);
      await store().claimRuns({ workerId: "w", now: T0, leaseMs: LEASE, limit: 1, workflows: [{ name: "research", version: "2" }] });
      expect(await store().countVersions()).toEqual([
        { workflow: "approval", version: "1", status: "pending", count: 1 },
        { workflow: "research", version: "1", status: "pending", count: 2 },
        { workflow: "research", version: "2", status: "running", count: 1 },
      ]);
    });
  });

  describe("drained versions", () => {
    it("drains and undrains idempotently, listing what is drained", async () => {
      expect(await store().listDrainedVersions()).toEqual([]);
      expect(await store().setVersionDrained("research", "1", true, T0)).toBe(true);
      expect(await store().setVersionDrained("research", "1", true, T0 + 5)).toBe(false);
      expect(await store().setVersionDrained("approval", "3", true, T0 + 1)).toBe(true);
      const listed = await store().listDrainedVersions();
      expect(listed.map((d) => `${d.workflow}@${d.version}`)).toEqual(["approval@3", "research@1"]);
      expect(listed.every((d) => typeof d.drainedAt === "number")).toBe(true);
      expect(await store().setVersionDrained("research", "1", false, T0 + 2)).toBe(true);
      expect(await store().setVersionDrained("research", "1", false, T0 + 3)).toBe(false);
      expect((await store().listDrainedVersions()).map((d) => `${d.workflow}@${d.version}`)).toEqual(["approval@3"]);
    });
  });

  describe("dead-letter at claim time", () => {
    /** Lets the held run's lease expire `times` times without progress, each time re-claimed by a new worker. */
    async function crashLoop(times: number, start: number, max?: number) {
      let now = start;
      for (let i = 0; i < times; i++) {
        now += LEASE + 1;
        const claimed = await store().claimRuns(claim(`w${i}`, now, max));
        if (claimed.length === 0) return { now, claimed: false };
        // The recovery writes an intent (not progress), then its worker "dies".
        await commitOk(store(), claimed[0]!, [stepStarted("s", i + 2)], now);
      }
      return { now, claimed: true };
    }

    it("moves a run to dead after max consecutive attempts without progress, journaling why", async () => {
      await store().createRun(newRun("r1"), T0);
      const [first] = await store().claimRuns(claim("w-first", T0, 3));
      await commitOk(store(), first!, [stepStarted("s")], T0);
      // Attempt 1 (the first claim) and attempts 2, 3 (recoveries) die without progress.
      const loop = await crashLoop(2, T0, 3);
      expect(loop.claimed).toBe(true);
      expect((await mustGet(store(), "r1")).status).toBe("running");
      const now = loop.now + LEASE + 1;
      expect(await store().claimRuns(claim("w-last", now, 3))).toEqual([]);
      const run = await mustGet(store(), "r1");
      expect(run.status).toBe("dead");
      expect(run.leaseOwner).toBeNull();
      expect(decode<{ code: string; data: { failures: number } }>(run.error)).toMatchObject({ code: "RECOVERY_FAILED", data: { failures: 3 } });
      const journal = await store().readJournal("r1");
      const dead = dataOf(journal.at(-1), "run.dead");
      expect(dead.failures).toBe(3);
      expect(dead.error.message).toContain("expired");
      // A dead run is terminal: nobody claims it, the old holder cannot write.
      expect(await store().claimRuns(claim("w-other", now + 10 * LEASE, 3))).toEqual([]);
      const [late] = await store().commit([{ runId: "r1", epoch: run.leaseEpoch - 1, entries: [stepStarted("s", 9)] }], now);
      expect(late).toMatchObject({ ok: false });
    });

    it("closes the pending human requests of a run it moves to dead, in the same transaction", async () => {
      await store().createRun(newRun("rh"), T0);
      const [first] = await store().claimRuns(claim("w-first", T0, 2));
      await commitOk(store(), first!, [entry("human.requested", "ask#0", { requestId: "rh:ask#0", question: "Ok?", options: [], timeoutAt: null })], T0);
      let now = T0;
      for (let i = 0; i < 6 && (await mustGet(store(), "rh")).status !== "dead"; i++) {
        now += LEASE + 1;
        const [held] = await store().claimRuns(claim(`w${i}`, now, 2));
        if (held) await commitOk(store(), held, [stepStarted("s", i + 2)], now);
      }
      expect((await mustGet(store(), "rh")).status).toBe("dead");
      expect(await store().getHumanRequest("rh:ask#0")).toMatchObject({ status: "closed", closedReason: "dead", answeredAt: now });
    });

    it("dead-letters a queued run the same way (flow control claims it through its queue)", async () => {
      const queues = [{ name: "q", concurrency: 1, perKeyConcurrency: null, rateLimit: null }];
      const queuedClaim = (workerId: string, now: number) => ({ ...claim(workerId, now, 2), queues });
      await store().createRun(newRun("qd", { flow: { queue: "q", concurrencyKey: null, priority: 0 } }), T0);
      let now = T0;
      const [first] = await store().claimRuns(queuedClaim("w-first", now));
      expect(first?.runId).toBe("qd");
      await commitOk(store(), first!, [stepStarted("s")], now);
      now += LEASE + 1;
      const [second] = await store().claimRuns(queuedClaim("w-second", now));
      expect(second?.runId).toBe("qd");
      await commitOk(store(), second!, [stepStarted("s", 2)], now);
      now += LEASE + 1;
      expect(await store().claimRuns(queuedClaim("w-third", now))).toEqual([]);
      expect((await mustGet(store(), "qd")).status).toBe("dead");
    });

    it("resets the count when an attempt makes progress", async () => {
      await store().createRun(newRun("r2"), T0);
      const [first] = await store().claimRuns(claim("w-first", T0, 3));
      await commitOk(store(), first!, [stepStarted("s")], T0);
      let { now } = await crashLoop(1, T0, 3); // 2 failed attempts so far
      // This attempt journals an outcome, then dies: the counter starts over.
      now += LEASE + 1;
      const [held] = await store().claimRuns(claim("w-progress", now, 3));
      await commitOk(store(), held!, [entry("step.completed", "s#0", { result: 1, attempt: 3 })], now);
      const loop = await crashLoop(2, now, 3); // 0 after the progress, then 1
      expect(loop.claimed).toBe(true);
      expect((await mustGet(store(), "r2")).status).toBe("running");
    });

    it("judges a long attempt by all of it: progress after its first entries resets the count, none counts", async () => {
      // 70 intents (more than the first look reads), then an outcome (r-late) or nothing (r-none).
      const attempt = (i: number, progress: boolean) => [
        ...Array.from({ length: 70 }, (_, k) => stepStarted(`a${i}-${k}`)),
        ...(progress ? [entry("step.completed", `a${i}-69#0`, { result: i, attempt: 1 })] : []),
      ];
      for (const [runId, progress] of [
        ["r-late", true],
        ["r-none", false],
      ] as const) {
        await store().createRun(newRun(runId), T0);
        let now = T0;
        const mine = async (workerId: string) => (await store().claimRuns(claim(workerId, now, 2))).find((run) => run.runId === runId);
        let held = await mine("w0");
        expect(held).toBeDefined();
        for (let i = 1; i <= 2 && held; i++) {
          await commitOk(store(), held, attempt(i, progress), now);
          now += LEASE + 1;
          held = await mine(`w${i}`);
        }
        // With progress in every attempt the run is re-claimed each time; without, the second recovery kills it.
        expect((await mustGet(store(), runId)).status).toBe(progress ? "running" : "dead");
      }
    });

    it("does not count clean suspensions, and never checks without a limit", async () => {
      await store().createRun(newRun("r3"), T0);
      let now = T0;
      for (let i = 0; i < 4; i++) {
        const [held] = await store().claimRuns(claim(`w${i}`, now, 2));
        expect(held?.runId).toBe("r3");
        await suspend(store(), held!, now + 1, now);
        now += 2;
      }
      // Woken from a suspension, the attempt dies: the first failure, not the fifth.
      const [woken] = await store().claimRuns(claim("w-woken", now, 2));
      await commitOk(store(), woken!, [stepStarted("s")], now);
      now += LEASE + 1;
      expect((await store().claimRuns(claim("w-next", now, 2))).map((r) => r.runId)).toEqual(["r3"]);
      // Without a limit, expired leases are re-claimed forever.
      const loop = await crashLoop(5, now);
      expect(loop.claimed).toBe(true);
      expect((await mustGet(store(), "r3")).status).toBe("running");
    });

    it("does not count an attempt its worker gave back while shutting down (run.released stopped), but does one given back on an error", async () => {
      await store().createRun(newRun("r5"), T0);
      let now = T0;
      let n = 0;
      const attempt = async (workerId: string, released?: { stopped?: boolean }) => {
        const [held] = await store().claimRuns(claim(workerId, now, 2));
        expect(held?.runId).toBe("r5");
        await commitOk(store(), held!, [stepStarted("s", ++n)], now);
        if (released) await commitOk(store(), held!, [entry("run.released", null, { workerId, ...released })], now);
        now += LEASE + 1;
      };
      // Five rolling restarts in a row, each giving the run back before its step finished: never dead.
      for (let i = 0; i < 5; i++) await attempt(`w-deploy-${i}`, { stopped: true });
      expect((await mustGet(store(), "r5")).status).toBe("running");
      // A release on an error counts like a crash: two in a row reach the limit of 2.
      await attempt("w-error", {});
      await attempt("w-crash");
      expect(await store().claimRuns(claim("w-last", now, 2))).toEqual([]);
      expect((await mustGet(store(), "r5")).status).toBe("dead");
    });

    it("a retried dead run starts counting from zero", async () => {
      await store().createRun(newRun("r4"), T0);
      const [first] = await store().claimRuns(claim("w-first", T0, 2));
      await commitOk(store(), first!, [stepStarted("s")], T0);
      let now = (await crashLoop(1, T0, 2)).now + LEASE + 1;
      expect(await store().claimRuns(claim("w-dead", now, 2))).toEqual([]);
      expect((await mustGet(store(), "r4")).status).toBe("dead");
      const retried = await store().controlRun("r4", ["failed", "dead"], entry("run.retried", null, { failedSteps: [] }), now);
      expect(retried.run.status).toBe("pending");
      const [again] = await store().claimRuns(claim("w-retry", now, 2));
      expect(again?.runId).toBe("r4");
      await commitOk(store(), again!, [stepStarted("s", 5)], now);
      // One failed attempt after the retry: re-claimed (a stale count of 2 would make it dead at once).
      now += LEASE + 1;
      expect((await store().claimRuns(claim("w-after", now, 2))).map((r) => r.runId)).toEqual(["r4"]);
    });
  });
}
