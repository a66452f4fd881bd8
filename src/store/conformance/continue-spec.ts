import { describe, expect, it } from "vitest";
import type { NewEntry } from "../../core/journal.js";
import { encode } from "../../core/serialize.js";
import type { RunRecord } from "../../core/run.js";
import type { InboxEvent, Store } from "../../core/store.js";
import { T0, WF, commitOk, entry, mustGet, reclaim, startRun } from "./harness.js";

/** The `run.continued` entry that ends `runId` (of workflow `solo:<base>`) and creates `nextRunId`. */
function continued(base: string, nextRunId: string, n: number): NewEntry {
  return entry("run.continued", null, { nextRunId, workflow: `solo:${base}`, version: WF.version, input: { n } });
}

function received(event: InboxEvent, opKey = "wait#0") {
  return entry("event.received", opKey, { type: event.type, eventId: event.eventId, payload: null, inboxId: event.id });
}

/** Where each event id is, as `[runId, eventId, consumed]`, over the given runs, in arrival order. */
async function whereAre(store: Store, runIds: string[]): Promise<[string, string, boolean][]> {
  const rows = (await Promise.all(runIds.map((runId) => store.listInbox(runId)))).flat().sort((a, b) => a.id - b.id);
  return rows.map((row) => [row.runId, row.eventId, row.consumedSeq !== null]);
}

/** Events and continue-as-new chains (`ctx.continueAsNew`): nothing sent to a chain is lost or delivered twice. */
export function continueSpec(store: () => Store): void {
  describe("events and continued runs", () => {
    it("moves the events the run had not consumed to the new run in the continuing commit, ids and order kept", async () => {
      const run = await startRun(store(), "loop");
      for (const id of ["e1", "e2", "e3"]) await store().sendEvent({ runId: "loop", type: "t", eventId: id, payload: encode(id) }, T0 + 1);
      await store().sendEvent({ runId: "loop", type: "u", eventId: "u1", payload: encode("u") }, T0 + 1);
      const [first] = await store().pendingEvents("loop", "t");
      const before = await store().listInbox("loop");
      // e1 is consumed by the same commit that continues the run: it stays with the old run.
      await commitOk(store(), run, [received(first as InboxEvent), continued("loop", "loop~2", 1)], T0 + 2);
      expect(await whereAre(store(), ["loop", "loop~2"])).toEqual([
        ["loop", "e1", true],
        ["loop~2", "e2", false],
        ["loop~2", "e3", false],
        ["loop~2", "u1", false],
      ]);
      const moved = await store().pendingEvents("loop~2", "t");
      expect(moved.map((e) => [e.id, e.payload, e.receivedAt])).toEqual(before.slice(1, 3).map((e) => [e.id, e.payload, e.receivedAt]));
      expect(await store().pendingEvents("loop", "t")).toEqual([]);
      // The new run consumes a moved event like any of its own.
      const [next] = await reclaim(store(), "loop", T0 + 3);
      expect(next?.runId).toBe("loop~2");
      await commitOk(store(), next as RunRecord, [received(moved[0] as InboxEvent)], T0 + 4);
      expect((await store().pendingEvents("loop~2", "t")).map((e) => e.eventId)).toEqual(["e3"]);
    });

    it("delivers an event sent to a run that continued as new to the last run of its chain, deduplicated along it", async () => {
      const run = await startRun(store(), "c");
      await store().sendEvent({ runId: "c", type: "t", eventId: "early", payload: encode(0) }, T0 + 1);
      const [early] = await store().pendingEvents("c", "t");
      await commitOk(store(), run, [received(early as InboxEvent), continued("c", "c~2", 1)], T0 + 2);
      const [second] = await reclaim(store(), "c", T0 + 3);
      await commitOk(store(), second as RunRecord, [continued("c", "c~3", 2)], T0 + 4);
      const [third] = await reclaim(store(), "c", T0 + 5);
      expect(third?.runId).toBe("c~3");
      await commitOk(store(), third as RunRecord, [entry("run.suspended", null, { wakeAt: null, waitingFor: [] })], T0 + 6);

      expect(await store().sendEvent({ runId: "c", type: "t", eventId: "late", payload: encode(1) }, T0 + 7)).toEqual({ duplicate: false, runId: "c~3" });
      expect(await whereAre(store(), ["c", "c~2", "c~3"])).toEqual([
        ["c", "early", true],
        ["c~3", "late", false],
      ]);
      // Woken like a run sent an event directly.
      expect(await mustGet(store(), "c~3")).toMatchObject({ status: "suspended", wakeAt: T0 + 7 });
      // An event id any run of the chain holds is a duplicate, whichever run of it is named.
      expect(await store().sendEvent({ runId: "c", type: "t", eventId: "early", payload: encode(2) }, T0 + 8)).toEqual({ duplicate: true });
      expect(await store().sendEvent({ runId: "c", type: "t", eventId: "late", payload: encode(2) }, T0 + 8)).toEqual({ duplicate: true });
      expect(await store().sendEvent({ runId: "c~2", type: "t", eventId: "late", payload: encode(2) }, T0 + 8)).toEqual({ duplicate: true });
      expect(await store().sendEvent({ runId: "c~3", type: "t", eventId: "direct", payload: encode(3) }, T0 + 8)).toEqual({ duplicate: false });
      expect((await store().listInbox("c~3")).map((e) => e.eventId)).toEqual(["late", "direct"]);

      // A chain whose last run finished refuses the event with that run's status.
      const [held] = await reclaim(store(), "c", T0 + 9);
      await commitOk(store(), held as RunRecord, [entry("run.completed", null, { output: 1 })], T0 + 10);
      await expect(store().sendEvent({ runId: "c", type: "t", eventId: "after", payload: "" }, T0 + 11)).rejects.toMatchObject({
        code: "RUN_FINISHED",
        runId: "c~3",
        status: "completed",
      });
    });

    it("keeps the runs of a chain while its last run lives, so events sent to the first id keep reaching it", async () => {
      const run = await startRun(store(), "p");
      await commitOk(store(), run, [continued("p", "p~2", 1)], T0 + 1);
      const [second] = await reclaim(store(), "p", T0 + 2);
      await commitOk(store(), second as RunRecord, [continued("p", "p~3", 2)], T0 + 3);
      // Runs whose ids only look alike: finished, and not of the chain ("p~x" is no successor's id).
      for (const other of ["p~2x", "pp"]) {
        const held = await startRun(store(), other, T0 + 4);
        await commitOk(store(), held, [entry("run.completed", null, { output: 1 })], T0 + 5);
      }
      const query = { finishedBefore: T0 + 100, statuses: ["completed" as const], limit: 10 };
      expect((await store().listPrunableRuns(query)).map((r) => r.runId).sort()).toEqual(["p~2x", "pp"].sort());
      const chain = await Promise.all(["p", "p~2"].map(async (runId) => ({ runId, lastSeq: (await mustGet(store(), runId)).lastSeq })));
      expect(await store().deleteRuns(chain)).toEqual([]);
      expect(await store().sendEvent({ runId: "p", type: "t", eventId: "e", payload: "" }, T0 + 6)).toEqual({ duplicate: false, runId: "p~3" });
      // Once the chain ended, all of it may go.
      const [third] = await reclaim(store(), "p", T0 + 7);
      await commitOk(store(), third as RunRecord, [entry("run.completed", null, { output: 3 })], T0 + 8);
      expect((await store().listPrunableRuns(query)).map((r) => r.runId).sort()).toEqual(["p", "p~2", "p~2x", "p~3", "pp"].sort());
      expect((await store().deleteRuns(chain)).sort()).toEqual(["p", "p~2"]);
    });

    it("delivers an event sent while the continuation commits exactly once, to the new run", async () => {
      for (let i = 0; i < 8; i++) {
        const runId = `race${i}`;
        const run = await startRun(store(), runId);
        await store().sendEvent({ runId, type: "t", eventId: "before", payload: "" }, T0 + 1);
        // The send and the commit race (each issued first half the time): whichever the store serializes
        // first, the event ends up unconsumed in the new run.
        const send = () => store().sendEvent({ runId, type: "t", eventId: "during", payload: "" }, T0 + 2);
        const commit = () => commitOk(store(), run, [continued(runId, `${runId}~2`, 1)], T0 + 2);
        const sent = i % 2 === 0 ? (await Promise.all([send(), commit()]))[0] : (await Promise.all([commit(), send()]))[1];
        expect(sent.duplicate).toBe(false);
        expect(await whereAre(store(), [runId, `${runId}~2`])).toEqual([
          [`${runId}~2`, "before", false],
          [`${runId}~2`, "during", false],
        ]);
        expect(await store().sendEvent({ runId, type: "t", eventId: "during", payload: "" }, T0 + 3)).toEqual({ duplicate: true });
      }
    });
  });
}
