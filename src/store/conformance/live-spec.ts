import { describe, expect, it } from "vitest";
import { decode, encode } from "../../core/serialize.js";
import type { Store } from "../../core/store.js";
import { T0, WF, commitOk, dataOf, entry, mustGet, newRun, startRun } from "./harness.js";

/** Run tags, published values and request replies, delayed starts, deadlines and continued runs. */
export function liveSpec(store: () => Store): void {
  describe("tags", () => {
    it("stores tags with the run, journals them in run.created and filters listRuns by every given tag", async () => {
      await store().createRun(newRun("a", { tags: { customer: "acme", tier: "gold" } }), T0);
      await store().createRun(newRun("b", { tags: { customer: "acme" } }), T0 + 1);
      await store().createRun(newRun("c", { tags: { customer: "globex" } }), T0 + 2);
      await store().createRun(newRun("d"), T0 + 3);
      expect(await store().getRunTags("a")).toEqual({ customer: "acme", tier: "gold" });
      expect(await store().getRunTags("d")).toEqual({});
      expect(dataOf((await store().readJournal("a"))[0], "run.created").tags).toEqual({ customer: "acme", tier: "gold" });
      const acme = await store().listRuns({ tags: { customer: "acme" } });
      expect(acme.runs.map((r) => r.runId)).toEqual(["b", "a"]);
      const gold = await store().listRuns({ tags: { customer: "acme", tier: "gold" } });
      expect(gold.runs.map((r) => r.runId)).toEqual(["a"]);
      expect((await store().listRuns({ tags: { customer: "nobody" } })).runs).toEqual([]);
      // Paged with the tag filter: pages are full and never repeat a run.
      const first = await store().listRuns({ tags: { customer: "acme" }, limit: 1 });
      const second = await store().listRuns({ tags: { customer: "acme" }, limit: 1, cursor: first.nextCursor });
      expect([...first.runs, ...second.runs].map((r) => r.runId)).toEqual(["b", "a"]);
    });

    it("gives a child created from the journal the tags of its child.started entry", async () => {
      const parent = await startRun(store(), "p");
      await commitOk(
        store(),
        parent,
        [entry("child.started", "sub#0", { childRunId: "p/sub#0", workflow: WF.name, version: WF.version, input: null, tags: { customer: "acme" } })],
        T0 + 1,
      );
      expect(await store().getRunTags("p/sub#0")).toEqual({ customer: "acme" });
    });

    it("deletes a pruned run's tags, values and deadline with it", async () => {
      const run = await startRun(store(), "gone", T0, "w1", { tags: { k: "v" }, deadlineAt: T0 + 10 });
      await commitOk(store(), run, [entry("publish.value", "publish:p#0", { name: "p", value: 1 }), entry("run.completed", null, { output: 1 })], T0 + 1);
      expect(await store().deleteRuns([{ runId: "gone", lastSeq: (await mustGet(store(), "gone")).lastSeq }])).toEqual(["gone"]);
      expect(await store().getRunTags("gone")).toEqual({});
      expect(await store().getRunValue("gone", "published", "p")).toBeUndefined();
      await store().createRun(newRun("gone", { workflow: "solo:gone" }), T0 + 2);
      expect(await store().listDueDeadlines(T0 + 100, 10)).toEqual([]);
    });
  });

  describe("published values and replies", () => {
    it("keeps the latest value per name, written by the commit of its entry", async () => {
      const run = await startRun(store(), "r1");
      for (let i = 0; i < 5; i++)
        await commitOk(store(), run, [entry("publish.value", `publish:progress#${i}`, { name: "progress", value: { done: i } })], T0 + i);
      await commitOk(store(), run, [entry("publish.value", "publish:phase#0", { name: "phase", value: "search" })], T0 + 9);
      const progress = await store().getRunValue("r1", "published", "progress");
      expect(progress).toMatchObject({ runId: "r1", kind: "published", name: "progress", at: T0 + 4 });
      expect(decode(progress?.value)).toEqual({ done: 4 });
      expect(decode((await store().getRunValue("r1", "published", "phase"))?.value)).toBe("search");
      expect(await store().getRunValue("r1", "published", "other")).toBeUndefined();
      expect(await store().getRunValue("r1", "reply", "progress")).toBeUndefined();
    });

    it("stores a reply under its request id, only when the write is accepted", async () => {
      const run = await startRun(store(), "r1");
      await commitOk(store(), run, [entry("request.replied", "request:steer#0", { name: "steer", requestId: "q1", reply: { ok: true } })], T0 + 1);
      expect(decode((await store().getRunValue("r1", "reply", "q1"))?.value)).toEqual({ reply: { ok: true } });
      const [stale] = await store().commit(
        [{ runId: "r1", epoch: run.leaseEpoch + 5, entries: [entry("request.replied", "request:steer#1", { name: "steer", requestId: "q2", reply: 1 })] }],
        T0 + 2,
      );
      expect(stale).toMatchObject({ ok: false });
      expect(await store().getRunValue("r1", "reply", "q2")).toBeUndefined();
    });
  });

  describe("delayed starts and deadlines", () => {
    it("creates a delayed run suspended on a start timer, claimable only once due", async () => {
      // The PostgreSQL store claims by its own clock: due times are relative to the real time.
      const later = Date.now() + 3_600_000;
      await store().createRun(newRun("later", { startAt: later }), T0);
      const row = await mustGet(store(), "later");
      expect(row).toMatchObject({ status: "suspended", wakeAt: later, lastSeq: 2 });
      expect(decode(row.waitingFor)).toEqual([{ kind: "timer", opKey: "start", wakeAt: later }]);
      const journal = await store().readJournal("later");
      expect(journal.map((e) => e.kind)).toEqual(["run.created", "run.suspended"]);
      expect(dataOf(journal[0], "run.created").startAt).toBe(later);
      const claimNow = () => store().claimRuns({ workerId: "w", now: Date.now(), leaseMs: 30_000, limit: 10, workflows: [WF] });
      expect(await claimNow()).toEqual([]);
      await store().createRun(newRun("due", { startAt: Date.now() - 1000 }), T0);
      expect((await claimNow()).map((r) => r.runId)).toEqual(["due"]);
    });

    it("lists due deadlines of live runs only, earliest first, until cleared", async () => {
      await store().createRun(newRun("a", { deadlineAt: T0 + 200 }), T0);
      await store().createRun(newRun("b", { deadlineAt: T0 + 100 }), T0);
      await store().createRun(newRun("c", { deadlineAt: T0 + 5_000 }), T0);
      const done = await startRun(store(), "done", T0, "w1", { deadlineAt: T0 + 50 });
      await commitOk(store(), done, [entry("run.completed", null, { output: 1 })], T0 + 1);
      expect(await store().listDueDeadlines(T0 + 300, 10)).toEqual([
        { runId: "b", dueAt: T0 + 100 },
        { runId: "a", dueAt: T0 + 200 },
      ]);
      expect(await store().listDueDeadlines(T0 + 300, 1)).toEqual([{ runId: "b", dueAt: T0 + 100 }]);
      expect(await store().clearDeadline("b")).toBe(true);
      expect(await store().clearDeadline("b")).toBe(false);
      expect(await store().listDueDeadlines(T0 + 300, 10)).toEqual([{ runId: "a", dueAt: T0 + 200 }]);
    });

    it("writes tags and deadlines of runs created in one batch", async () => {
      await store().createRuns([newRun("x", { tags: { t: "1" }, deadlineAt: T0 + 1 }), newRun("y", { tags: { t: "2" } })], T0);
      expect(await store().getRunTags("x")).toEqual({ t: "1" });
      expect(await store().getRunTags("y")).toEqual({ t: "2" });
      expect(await store().listDueDeadlines(T0 + 10, 10)).toEqual([{ runId: "x", dueAt: T0 + 1 }]);
    });
  });

  describe("continued runs", () => {
    it("ends the run completed and creates its successor, linked both ways, in the same commit", async () => {
      const run = await startRun(store(), "loop", T0, "w1", { tags: { customer: "acme" } });
      await commitOk(
        store(),
        run,
        [entry("run.continued", null, { nextRunId: "loop~2", workflow: "solo:loop", version: WF.version, input: { n: 2 }, tags: { customer: "acme" } })],
        T0 + 1,
      );
      const old = await mustGet(store(), "loop");
      expect(old).toMatchObject({ status: "completed", leaseOwner: null });
      expect(old.finishedAt).not.toBeNull();
      const next = await mustGet(store(), "loop~2");
      expect(next).toMatchObject({ status: "pending", workflow: "solo:loop", parentRunId: null });
      expect(decode(next.input)).toEqual({ n: 2 });
      expect(dataOf((await store().readJournal("loop~2"))[0], "run.created")).toMatchObject({ continuedFrom: "loop", tags: { customer: "acme" } });
      expect(await store().getRunTags("loop~2")).toEqual({ customer: "acme" });
      // A second attempt (a stale writer) changes nothing: the old run is finished.
      const [again] = await store().commit(
        [
          {
            runId: "loop",
            epoch: run.leaseEpoch,
            entries: [entry("run.continued", null, { nextRunId: "loop~3", workflow: "solo:loop", version: "1", input: encode(null) })],
          },
        ],
        T0 + 2,
      );
      expect(again).toMatchObject({ ok: false, reason: "finished" });
      expect(await store().getRun("loop~3")).toBeUndefined();
    });
  });
}
