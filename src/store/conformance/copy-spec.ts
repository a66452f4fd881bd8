import { describe, expect, it } from "vitest";
import type { RunRecord } from "../../core/run.js";
import { encode } from "../../core/serialize.js";
import type { CopiedEntry, Store } from "../../core/store.js";
import { T0, WF, commitOk, dataOf, entry, mustGet, newRun, reclaim, startRun, stepStarted } from "./harness.js";

/** createRunWithJournal (time travel) and countRuns. */
export function copySpec(store: () => Store): void {
  describe("createRunWithJournal", () => {
    /** A source run "src" with one completed step (indexed text), an event consumed and a started step. */
    async function source(): Promise<CopiedEntry[]> {
      const run = await startRun(store(), "src"); // 1 created, 2 claimed
      await commitOk(store(), run, [stepStarted("a#0"), entry("step.completed", "a#0", { result: 42, attempt: 1, text: "ceramic electrolyte" })], T0 + 1); // 3, 4
      await store().sendEvent({ runId: "src", type: "go", eventId: "e1", payload: encode(1) }, T0 + 2);
      const [inbox] = await store().listInbox("src");
      await commitOk(
        store(),
        run,
        [entry("event.received", "go#0", { type: "go", eventId: "e1", payload: 1, inboxId: inbox!.id }), stepStarted("b#0")],
        T0 + 3,
      ); // 5, 6
      return (await store().readJournal("src")).slice(1).map(({ runId: _, seq: __, ...rest }) => rest);
    }

    it("writes run.created, then the copies verbatim at seq 2…; the row is pending at their highest epoch", async () => {
      const copies = await source();
      const { run, created } = await store().createRunWithJournal(newRun("fork", { input: encode({ topic: "x" }) }), copies, T0 + 10);
      expect(created).toBe(true);
      const expected: RunRecord = {
        runId: "fork",
        workflow: WF.name,
        version: WF.version,
        status: "pending",
        input: encode({ topic: "x" }),
        output: null,
        error: null,
        parentRunId: null,
        parentOpKey: null,
        wakeAt: null,
        waitingFor: null,
        leaseOwner: null,
        leaseExpiresAt: null,
        leaseEpoch: 1,
        lastSeq: 6,
        wakePending: false,
        createdAt: T0 + 10,
        updatedAt: T0 + 10,
        finishedAt: null,
      };
      expect(run).toEqual(expected);
      expect(await mustGet(store(), "fork")).toEqual(expected);
      const journal = await store().readJournal("fork");
      expect(journal.map((e) => [e.seq, e.kind, e.opKey])).toEqual([
        [1, "run.created", null],
        [2, "run.claimed", null],
        [3, "step.started", "a#0"],
        [4, "step.completed", "a#0"],
        [5, "event.received", "go#0"],
        [6, "step.started", "b#0"],
      ]);
      expect(dataOf(journal[0], "run.created")).toEqual({ workflow: WF.name, version: WF.version, input: { topic: "x" } });
      const original = await store().readJournal("src");
      for (let i = 1; i < 6; i++) expect({ ...journal[i], runId: "src" }).toEqual(original[i]);
    });

    it("has no side effects on other tables, except indexing search text; the source is untouched", async () => {
      const copies = await source();
      const before = { run: await mustGet(store(), "src"), journal: await store().readJournal("src"), inbox: await store().listInbox("src") };
      await store().createRunWithJournal(newRun("fork"), copies, T0 + 10);
      expect(await store().listInbox("fork")).toEqual([]);
      expect(await store().listInbox("src")).toEqual(before.inbox);
      expect(await mustGet(store(), "src")).toEqual(before.run);
      expect(await store().readJournal("src")).toEqual(before.journal);
      expect((await store().searchJournal("fork", "ceramic", 10)).map((hit) => [hit.seq, hit.opKey])).toEqual([[4, "a#0"]]);
    });

    it("can be claimed and appended to: the claim's epoch follows the copies'", async () => {
      const copies = await source();
      await store().createRunWithJournal(newRun("fork", { workflow: "solo:fork" }), copies, T0 + 10);
      const [claimed] = await reclaim(store(), "fork", T0 + 11);
      expect(claimed).toMatchObject({ runId: "fork", status: "running", leaseEpoch: 2, lastSeq: 7 });
      await commitOk(store(), claimed!, [entry("step.completed", "b#0", { result: 1, attempt: 1 })], T0 + 12);
      expect((await store().readJournal("fork", { afterSeq: 6 })).map((e) => [e.seq, e.kind, e.epoch])).toEqual([
        [7, "run.claimed", 2],
        [8, "step.completed", 2],
      ]);
    });

    it("returns the existing run and writes nothing when the runId exists", async () => {
      const copies = await source();
      const first = await store().createRun(newRun("fork"), T0);
      const again = await store().createRunWithJournal(newRun("fork", { input: encode("other") }), copies, T0 + 10);
      expect(again).toEqual({ run: first.run, created: false });
      expect(await store().readJournal("fork")).toHaveLength(1);
    });

    it("with no copies is a pending run with only run.created", async () => {
      const { run } = await store().createRunWithJournal(newRun("bare"), [], T0);
      expect(run).toMatchObject({ status: "pending", leaseEpoch: 0, lastSeq: 1 });
      expect(await store().readJournal("bare")).toHaveLength(1);
    });
  });

  describe("countRuns", () => {
    it("counts runs per workflow and status; nothing for an empty store", async () => {
      expect(await store().countRuns()).toEqual([]);
      await store().createRuns([newRun("a"), newRun("b"), newRun("c", { workflow: "other" })], T0);
      const run = await startRun(store(), "d");
      await commitOk(store(), run, [entry("run.completed", null, { output: 1 })], T0 + 1);
      const counts = await store().countRuns();
      const sorted = [...counts].sort((x, y) => (x.workflow + x.status < y.workflow + y.status ? -1 : 1));
      expect(sorted).toEqual([
        { workflow: "other", status: "pending", count: 1 },
        { workflow: "solo:d", status: "completed", count: 1 },
        { workflow: "wf", status: "pending", count: 2 },
      ]);
    });
  });
}
