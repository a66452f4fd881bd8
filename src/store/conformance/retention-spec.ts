import { describe, expect, it } from "vitest";
import { isCairnError } from "../../core/errors.js";
import type { RunRecord } from "../../core/run.js";
import { encode } from "../../core/serialize.js";
import type { RunImport, Store } from "../../core/store.js";
import { T0, commitOk, entry, mustGet, startRun, stepStarted, suspend } from "./harness.js";

const DAY = 86_400_000;

/** listPrunableRuns, deleteRuns, readRunRows and importRun. */
export function retentionSpec(store: () => Store): void {
  /** A run with a step (indexed text), a consumed and a buffered event and an answered question, finished at `at`. */
  async function finished(runId: string, at: number, how: "completed" | "failed" | "cancelled" = "completed"): Promise<RunRecord> {
    const run = await startRun(store(), runId, at - 10);
    await commitOk(store(), run, [stepStarted("a#0"), entry("step.completed", "a#0", { result: 1, attempt: 1, text: `solid electrolyte ${runId}` })], at - 9);
    await store().sendEvent({ runId, type: "go", eventId: "e1", payload: encode(1) }, at - 8);
    await store().sendEvent({ runId, type: "late", eventId: "e2", payload: encode(2) }, at - 8);
    const [inbox] = await store().listInbox(runId);
    await commitOk(store(), run, [entry("event.received", "go#0", { type: "go", eventId: "e1", payload: 1, inboxId: inbox!.id })], at - 7);
    await commitOk(
      store(),
      run,
      [entry("human.requested", "ok#0", { requestId: `${runId}:ok#0`, question: "Ship?", options: ["yes"], timeoutAt: null })],
      at - 6,
    );
    const last =
      how === "completed"
        ? entry("run.completed", null, { output: { done: runId } })
        : how === "failed"
          ? entry("run.failed", null, { error: { name: "Error", message: "boom" } })
          : entry("run.cancelled", null, { reason: "no" });
    await commitOk(store(), run, [last], at);
    return mustGet(store(), runId);
  }

  async function gone(runId: string): Promise<void> {
    expect(await store().getRun(runId)).toBeUndefined();
    expect(await store().readJournal(runId)).toEqual([]);
    expect(await store().listInbox(runId)).toEqual([]);
    expect(await store().listHumanRequests({ runId })).toEqual([]);
    expect(await store().searchJournal(runId, "electrolyte", 10)).toEqual([]);
  }

  const all = ["completed", "failed", "cancelled", "compensated", "compensation_failed", "dead"] as const;

  describe("retention", () => {
    it("lists terminal runs finished before the cutoff, oldest first, by status and workflow, never live ones", async () => {
      await finished("old-done", T0);
      await finished("old-failed", T0 + 1, "failed");
      await finished("old-cancelled", T0 + 2, "cancelled");
      await finished("new-done", T0 + 10 * DAY);
      const live = await startRun(store(), "live", T0);
      await suspend(store(), live, null, T0 + 1);
      await startRun(store(), "running", T0);
      const cutoff = T0 + DAY;
      const ids = async (query: Partial<Parameters<Store["listPrunableRuns"]>[0]>) =>
        (await store().listPrunableRuns({ finishedBefore: cutoff, statuses: all, limit: 100, ...query })).map((r) => r.runId);
      expect(await ids({})).toEqual(["old-done", "old-failed", "old-cancelled"]);
      expect(await ids({ statuses: ["failed", "running"] })).toEqual(["old-failed"]);
      expect(await ids({ statuses: ["suspended", "running", "pending"] })).toEqual([]);
      expect(await ids({ workflow: "solo:old-cancelled" })).toEqual(["old-cancelled"]);
      expect(await ids({ limit: 2 })).toEqual(["old-done", "old-failed"]);
      expect(await ids({ finishedBefore: T0 })).toEqual([]);
      expect(await ids({ finishedBefore: T0 + 100 * DAY })).toEqual(["old-done", "old-failed", "old-cancelled", "new-done"]);
    });

    it("deletes a run with every row that belongs to it, and nothing of other runs", async () => {
      const a = await finished("a", T0);
      const b = await finished("b", T0);
      const bBefore = await store().readRunRows("b");
      expect(await store().deleteRuns([{ runId: a.runId, lastSeq: a.lastSeq }])).toEqual(["a"]);
      await gone("a");
      expect(await store().readRunRows("b")).toEqual(bBefore);
      expect((await store().searchJournal("b", "electrolyte", 10)).length).toBe(1);
      expect(b.status).toBe("completed");
      expect(await store().deleteRuns([{ runId: "a", lastSeq: a.lastSeq }])).toEqual([]);
    });

    it("never deletes a live run, nor one whose journal grew since it was selected (retried)", async () => {
      const failed = await finished("f", T0, "failed");
      const live = await startRun(store(), "live", T0);
      await suspend(store(), live, T0 + DAY, T0 + 1);
      const liveRow = await mustGet(store(), "live");
      const { applied } = await store().controlRun("f", ["failed"], entry("run.retried", null, { failedSteps: [] }), T0 + 5);
      expect(applied).toBe(true);
      const deleted = await store().deleteRuns([
        { runId: "f", lastSeq: failed.lastSeq },
        { runId: "live", lastSeq: liveRow.lastSeq },
        { runId: "missing", lastSeq: 1 },
      ]);
      expect(deleted).toEqual([]);
      expect(await mustGet(store(), "f")).toMatchObject({ status: "pending", lastSeq: failed.lastSeq + 1 });
      expect((await store().readJournal("f")).length).toBe(failed.lastSeq + 1);
      expect(await mustGet(store(), "live")).toEqual(liveRow);
    });

    it("keeps a finished child while its parent is live, and a finished parent while a child is live", async () => {
      const parent = await startRun(store(), "p", T0);
      await commitOk(store(), parent, [entry("child.started", "sub#0", { childRunId: "c", workflow: "solo:c", version: "1", input: {} })], T0 + 1);
      await suspend(store(), parent, null, T0 + 2);
      const [child] = await store().claimRuns({ workerId: "w", now: T0 + 3, leaseMs: 30_000, limit: 1, workflows: [{ name: "solo:c", version: "1" }] });
      await commitOk(store(), child!, [entry("run.completed", null, { output: 1 })], T0 + 4);
      const query = { finishedBefore: T0 + DAY, statuses: all, limit: 10 };
      expect(await store().listPrunableRuns(query)).toEqual([]);
      const c = await mustGet(store(), "c");
      expect(await store().deleteRuns([{ runId: "c", lastSeq: c.lastSeq }])).toEqual([]);
      expect(await mustGet(store(), "c")).toEqual(c);

      // The other way round: a finished parent whose child is still running.
      const p2 = await startRun(store(), "p2", T0);
      await commitOk(store(), p2, [entry("child.started", "sub#0", { childRunId: "c2", workflow: "solo:c2", version: "1", input: {} })], T0 + 1);
      await commitOk(store(), p2, [entry("run.completed", null, { output: 2 })], T0 + 2);
      const p2Row = await mustGet(store(), "p2");
      expect((await store().listPrunableRuns(query)).map((r) => r.runId)).toEqual([]);
      expect(await store().deleteRuns([{ runId: "p2", lastSeq: p2Row.lastSeq }])).toEqual([]);
      const [c2] = await store().claimRuns({ workerId: "w", now: T0 + 3, leaseMs: 30_000, limit: 1, workflows: [{ name: "solo:c2", version: "1" }] });
      await commitOk(store(), c2!, [entry("run.completed", null, { output: 3 })], T0 + 5);
      expect((await store().listPrunableRuns(query)).map((r) => r.runId)).toEqual(["p2", "c2"]);
    });

    it("reads a run's rows and imports them back verbatim, searchable, after a delete", async () => {
      const run = await finished("r", T0);
      const rows = (await store().readRunRows("r"))!;
      expect(rows.run).toEqual(run);
      expect(rows.journal.map((e) => e.seq)).toEqual(Array.from({ length: run.lastSeq }, (_, i) => i + 1));
      expect(rows.inbox.map((e) => [e.eventId, e.consumedSeq === null])).toEqual([
        ["e1", false],
        ["e2", true],
      ]);
      expect(rows.humanRequests.map((h) => h.requestId)).toEqual(["r:ok#0"]);
      expect(await store().readRunRows("nope")).toBeUndefined();
      expect(await store().deleteRuns([{ runId: "r", lastSeq: run.lastSeq }])).toEqual(["r"]);
      await store().importRun(rows);
      expect(await store().readRunRows("r")).toEqual(rows);
      expect((await store().searchJournal("r", "electrolyte", 10)).map((h) => h.opKey)).toEqual(["a#0"]);
      expect(await store().getHumanRequest("r:ok#0")).toMatchObject({ runId: "r", status: "closed", closedReason: "completed" });
    });

    it("refuses an import whose run id or human request id exists, and writes nothing", async () => {
      await finished("r", T0);
      const rows = (await store().readRunRows("r"))!;
      const before = await store().readRunRows("r");
      await expect(store().importRun(rows)).rejects.toSatisfy((e: unknown) => isCairnError(e, "RUN_CONFLICT"));
      expect(await store().readRunRows("r")).toEqual(before);
      const renamed: RunImport = {
        ...rows,
        run: { ...rows.run, runId: "r2" },
        journal: rows.journal.map((e) => ({ ...e, runId: "r2" })),
        inbox: rows.inbox.map((e) => ({ ...e, runId: "r2" })),
      };
      await expect(store().importRun(renamed)).rejects.toSatisfy((e: unknown) => isCairnError(e, "RUN_CONFLICT"));
      expect(await store().getRun("r2")).toBeUndefined();
      expect(await store().readJournal("r2")).toEqual([]);
      expect(await store().listInbox("r2")).toEqual([]);
      expect(await store().searchJournal("r2", "electrolyte", 10)).toEqual([]);
    });
  });
}
