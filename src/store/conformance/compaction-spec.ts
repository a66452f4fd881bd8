import { describe, expect, it } from "vitest";
import { planCompaction } from "../../core/compaction.js";
import { isCairnError } from "../../core/errors.js";
import type { Store } from "../../core/store.js";
import { T0, commitOk, entry, mustGet, newRun, seqs, startRun, stepStarted } from "./harness.js";

/** listCompactableRuns, compactJournal, readCompaction, and the marker through export, import, copy and prune. */
export function compactionSpec(store: () => Store): void {
  const completed = (key: string) => entry("step.completed", key, { result: key, attempt: 1 });

  /**
   * resume-spec's loop: 1–2 created and claimed, 3–4 a step, 5 loop.started, 6–9 two iterations,
   * 10 another op's outcome, 11 a snapshot (at T0 + 5) keeping 10, 12–15 two iterations, 16 a
   * snapshot (at T0 + 7), 17 an iteration under way.
   */
  async function looped(runId: string) {
    const run = await startRun(store(), runId);
    await commitOk(store(), run, [stepStarted("before#0"), completed("before#0")], T0 + 1);
    await commitOk(store(), run, [entry("loop.started", "l#0", { snapshotEvery: 2 })], T0 + 2);
    await commitOk(store(), run, [stepStarted("l#0/0/s#0"), completed("l#0/0/s#0"), stepStarted("l#0/1/s#0"), completed("l#0/1/s#0")], T0 + 3);
    await commitOk(store(), run, [completed("outer#0")], T0 + 4);
    await commitOk(store(), run, [entry("loop.snapshot", "l#0", { iteration: 2, state: { n: 2 }, from: 6, keep: [10] })], T0 + 5);
    await commitOk(store(), run, [stepStarted("l#0/2/s#0"), completed("l#0/2/s#0"), stepStarted("l#0/3/s#0"), completed("l#0/3/s#0")], T0 + 6);
    await commitOk(store(), run, [entry("loop.snapshot", "l#0", { iteration: 4, state: { n: 4 }, from: 6, keep: [10] })], T0 + 7);
    await commitOk(store(), run, [stepStarted("l#0/4/s#0")], T0 + 8);
    return run;
  }

  const plan = async (runId: string, before: number, checkedSeq = 0) => (await planCompaction(await store().readJournal(runId), before, checkedSeq))!;

  describe("journal compaction", () => {
    it("deletes what a checkpoint supersedes, keeps seqs, the resume read and the run row, and records a marker", async () => {
      const run = await looped("r1");
      const resumeBefore = await store().readJournalForResume("r1");
      const rowBefore = await mustGet(store(), "r1");
      expect(await store().readCompaction("r1")).toBeUndefined();

      const first = await plan("r1", T0 + 6);
      expect(first).toMatchObject({ seqs: [6, 7, 8, 9], checkpointSeq: 11 });
      const outcome = await store().compactJournal("r1", first, T0 + 100);
      expect(outcome).toMatchObject({ deleted: 4, compaction: { entries: 4, coveredSeq: 11, checkedSeq: 11, at: T0 + 100 } });
      expect(outcome!.bytes).toBeGreaterThan(0);
      expect(outcome!.compaction!.bytes).toBe(outcome!.bytes);
      const marker = outcome!.compaction;
      expect(await seqs(store(), "r1")).toEqual([1, 2, 3, 4, 5, 10, 11, 12, 13, 14, 15, 16, 17]);

      const second = await plan("r1", T0 + 100, marker!.checkedSeq);
      expect(second).toMatchObject({ seqs: [11, 12, 13, 14, 15], checkpointSeq: 16 });
      expect(await store().compactJournal("r1", second, T0 + 200)).toMatchObject({
        deleted: 5,
        compaction: { entries: 9, coveredSeq: 16, checkedSeq: 16, at: T0 + 200 },
      });
      expect(await seqs(store(), "r1")).toEqual([1, 2, 3, 4, 5, 10, 16, 17]);
      expect(await store().readCompaction("r1")).toMatchObject({ entries: 9, coveredSeq: 16 });

      // A resume reads exactly what it read before; the run row is untouched and the writer goes on at seq 18.
      expect(await store().readJournalForResume("r1")).toEqual(resumeBefore);
      expect(await mustGet(store(), "r1")).toEqual(rowBefore);
      const [next] = await store().commit([{ runId: "r1", epoch: run.leaseEpoch, entries: [completed("l#0/4/s#0")] }], T0 + 300);
      expect(next).toEqual({ ok: true, firstSeq: 18, lastSeq: 18 });
      expect((await store().readJournal("r1", { afterSeq: 10, limit: 2 })).map((e) => e.seq)).toEqual([16, 17]);
    });

    it("leaves the search index whole: compacted step results are still found", async () => {
      const run = await startRun(store(), "r1");
      await commitOk(store(), run, [entry("loop.started", "l#0", { snapshotEvery: 1 })], T0 + 1); // 3
      await commitOk(
        store(),
        run,
        [stepStarted("l#0/0/s#0"), entry("step.completed", "l#0/0/s#0", { result: 1, attempt: 1, text: "solid electrolyte" })],
        T0 + 2,
      ); // 4, 5
      await commitOk(store(), run, [entry("loop.snapshot", "l#0", { iteration: 1, state: 1, from: 4, keep: [] })], T0 + 3); // 6
      expect(await store().compactJournal("r1", await plan("r1", T0 + 4), T0 + 10)).toMatchObject({ deleted: 2, compaction: { entries: 2 } });
      expect(await seqs(store(), "r1")).toEqual([1, 2, 3, 6]);
      expect(await store().searchJournal("r1", "electrolyte", 10)).toEqual([{ seq: 5, opKey: "l#0/0/s#0", text: "solid electrolyte" }]);
    });

    it("counts only what it deleted, never seq 1, the checkpoint or anything after it", async () => {
      await looped("r1");
      const first = await plan("r1", T0 + 6);
      await store().compactJournal("r1", first, T0 + 100);
      // The same plan again (a second worker racing): nothing more goes, nothing is counted twice.
      expect(await store().compactJournal("r1", first, T0 + 150)).toEqual({
        deleted: 0,
        bytes: 0,
        compaction: expect.objectContaining({ entries: 4, at: T0 + 100 }),
      });
      // Seqs outside (1, checkpoint) are ignored even when asked for.
      expect(await store().compactJournal("r1", { seqs: [1, 11, 12, 17], bytes: 0, checkpointSeq: 11 }, T0 + 200)).toMatchObject({
        deleted: 0,
        compaction: { entries: 4 },
      });
      expect(await seqs(store(), "r1")).toEqual([1, 2, 3, 4, 5, 10, 11, 12, 13, 14, 15, 16, 17]);
    });

    it("refuses a checkpoint seq that is not a checkpoint, and answers undefined for an unknown run", async () => {
      await looped("r1");
      const refused = await store()
        .compactJournal("r1", { seqs: [6], bytes: 0, checkpointSeq: 10 }, T0 + 100)
        .catch((error: unknown) => error);
      expect(isCairnError(refused) && refused.code).toBe("INVALID_INPUT");
      expect(String((refused as Error).message)).toMatch(/seq 10 of run "r1" is not a loop checkpoint/);
      expect(await seqs(store(), "r1")).toHaveLength(17);
      expect(await store().compactJournal("ghost", { seqs: [2], bytes: 0, checkpointSeq: 3 }, T0)).toBeUndefined();
      expect(await store().readCompaction("ghost")).toBeUndefined();
    });

    it("lists runs with a checkpoint older than the cutoff above the one last checked, by run id", async () => {
      await looped("b");
      await looped("a");
      const plain = await startRun(store(), "c");
      await commitOk(store(), plain, [stepStarted("x#0"), completed("x#0")], T0 + 1);
      const list = (query: Partial<Parameters<Store["listCompactableRuns"]>[0]>) =>
        store().listCompactableRuns({ checkpointBefore: T0 + 6, limit: 10, ...query });
      expect(await list({})).toEqual([
        { runId: "a", checkedSeq: 0 },
        { runId: "b", checkedSeq: 0 },
      ]);
      expect(await list({ checkpointBefore: T0 + 5 })).toEqual([]);
      expect(await list({ limit: 1 })).toEqual([{ runId: "a", checkedSeq: 0 }]);
      expect(await list({ afterRunId: "a" })).toEqual([{ runId: "b", checkedSeq: 0 }]);
      expect(await list({ runId: "b" })).toEqual([{ runId: "b", checkedSeq: 0 }]);
      await store().compactJournal("a", await plan("a", T0 + 6), T0 + 100);
      // Checked through seq 11: listed again only once the next snapshot (seq 16, at T0 + 7) is old enough.
      expect(await list({})).toEqual([{ runId: "b", checkedSeq: 0 }]);
      expect(await list({ checkpointBefore: T0 + 8 })).toEqual([
        { runId: "a", checkedSeq: 11 },
        { runId: "b", checkedSeq: 0 },
      ]);
    });

    it("carries the marker through readRunRows, importRun and createRunWithJournal, and prune deletes it", async () => {
      const run = await looped("r1");
      await store().compactJournal("r1", await plan("r1", T0 + 8), T0 + 100);
      await commitOk(store(), run, [entry("run.completed", null, { output: 1 })], T0 + 200);
      const rows = (await store().readRunRows("r1"))!;
      expect(rows.compaction).toMatchObject({ entries: 9, coveredSeq: 16 });
      expect(rows.journal.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 10, 16, 17, 18]);

      await store().importRun({ ...rows, run: { ...rows.run, runId: "copy" }, journal: rows.journal.map((e) => ({ ...e, runId: "copy" })), humanRequests: [] });
      expect(await store().readCompaction("copy")).toEqual(rows.compaction);
      expect(await seqs(store(), "copy")).toEqual([1, 2, 3, 4, 5, 10, 16, 17, 18]);
      expect(await store().readJournalForResume("copy")).toEqual(await store().readJournalForResume("copy"));

      const copies = rows.journal.slice(1, 8).map(({ seq, kind, opKey, payload, epoch, at }) => ({ seq, kind, opKey, payload, epoch, at }));
      const fork = await store().createRunWithJournal(newRun("fork"), copies, T0 + 300, { ...rows.compaction!, entries: 9 });
      expect(fork.run.lastSeq).toBe(17);
      expect(await seqs(store(), "fork")).toEqual([1, 2, 3, 4, 5, 10, 16, 17]);
      expect(await store().readCompaction("fork")).toMatchObject({ entries: 9, coveredSeq: 16 });
      expect((await store().readJournalForResume("fork")).map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 10, 16, 17]);

      expect(await store().deleteRuns([{ runId: "r1", lastSeq: 18 }])).toEqual(["r1"]);
      expect(await store().readCompaction("r1")).toBeUndefined();
      expect(await store().readJournal("r1")).toEqual([]);
    });
  });
}
