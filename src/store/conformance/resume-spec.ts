import { describe, expect, it } from "vitest";
import type { Store } from "../../core/store.js";
import { T0, commitOk, entry, startRun, stepStarted } from "./harness.js";

/** readJournalForResume: what loop checkpoints let a resume skip, and what they must keep. */
export function resumeSpec(store: () => Store): void {
  describe("readJournalForResume", () => {
    const completed = (key: string) => entry("step.completed", key, { result: key, attempt: 1 });
    const seqsOf = async (runId: string) => (await store().readJournalForResume(runId)).map((e) => e.seq);

    it("returns the whole journal when there is no checkpoint", async () => {
      const run = await startRun(store(), "r1");
      await commitOk(store(), run, [stepStarted("a#0"), completed("a#0")], T0 + 1);
      expect(await store().readJournalForResume("r1")).toEqual(await store().readJournal("r1"));
      expect(await store().readJournalForResume("ghost")).toEqual([]);
    });

    it("skips what the newest snapshot supersedes, keeps its exceptions and everything after it", async () => {
      const run = await startRun(store(), "r1"); // seqs 1, 2
      await commitOk(store(), run, [stepStarted("before#0"), completed("before#0")], T0 + 1); // 3, 4
      await commitOk(store(), run, [entry("loop.started", "l#0", { snapshotEvery: 2 })], T0 + 2); // 5
      // Iterations 0 and 1 (6–9), an outer op's outcome written meanwhile (10), then a snapshot (11).
      await commitOk(store(), run, [stepStarted("l#0/0/s#0"), completed("l#0/0/s#0"), stepStarted("l#0/1/s#0"), completed("l#0/1/s#0")], T0 + 3);
      await commitOk(store(), run, [completed("outer#0")], T0 + 4);
      await commitOk(store(), run, [entry("loop.snapshot", "l#0", { iteration: 2, state: { n: 2 }, from: 6, keep: [10] })], T0 + 5);
      // Iterations 2 and 3 (12–15), a second snapshot (16) that still keeps 10, iteration 4 under way (17).
      await commitOk(store(), run, [stepStarted("l#0/2/s#0"), completed("l#0/2/s#0"), stepStarted("l#0/3/s#0"), completed("l#0/3/s#0")], T0 + 6);
      await commitOk(store(), run, [entry("loop.snapshot", "l#0", { iteration: 4, state: { n: 4 }, from: 6, keep: [10] })], T0 + 7);
      await commitOk(store(), run, [stepStarted("l#0/4/s#0")], T0 + 8);

      expect(await seqsOf("r1")).toEqual([1, 2, 3, 4, 5, 10, 16, 17]);
      const [snapshot] = (await store().readJournalForResume("r1")).filter((e) => e.kind === "loop.snapshot");
      expect(snapshot).toEqual((await store().readJournal("r1", { afterSeq: 15, limit: 1 }))[0]);
    });

    it("walks down through completed and nested loops", async () => {
      const run = await startRun(store(), "r1"); // 1, 2
      // A first loop that completed (3 started, 4–5 an iteration, 6 completed).
      await commitOk(store(), run, [entry("loop.started", "a#0", { snapshotEvery: 0 }), stepStarted("a#0/0/s#0"), completed("a#0/0/s#0")], T0 + 1);
      await commitOk(store(), run, [entry("loop.completed", "a#0", { result: 1, iterations: 1, from: 4, keep: [] })], T0 + 2);
      // An outer loop (7) with a snapshot after iteration 0 (8–9, snapshot 10); in iteration 1 an
      // inner loop (11) with a snapshot (12–13, snapshot 14) and an op after it (15).
      await commitOk(store(), run, [entry("loop.started", "o#0", { snapshotEvery: 1 }), stepStarted("o#0/0/s#0"), completed("o#0/0/s#0")], T0 + 3);
      await commitOk(store(), run, [entry("loop.snapshot", "o#0", { iteration: 1, state: 1, from: 8, keep: [] })], T0 + 4);
      await commitOk(
        store(),
        run,
        [entry("loop.started", "o#0/1/i#0", { snapshotEvery: 1 }), stepStarted("o#0/1/i#0/0/s#0"), completed("o#0/1/i#0/0/s#0")],
        T0 + 5,
      );
      await commitOk(store(), run, [entry("loop.snapshot", "o#0/1/i#0", { iteration: 1, state: 1, from: 12, keep: [] })], T0 + 6);
      await commitOk(store(), run, [stepStarted("o#0/1/i#0/1/s#0")], T0 + 7);

      expect(await seqsOf("r1")).toEqual([1, 2, 3, 6, 7, 10, 11, 14, 15]);
    });

    it("never returns another run's entries", async () => {
      const a = await startRun(store(), "a");
      const b = await startRun(store(), "b");
      await commitOk(store(), a, [entry("loop.started", "l#0", { snapshotEvery: 1 }), stepStarted("l#0/0/s#0")], T0 + 1);
      await commitOk(store(), b, [stepStarted("x#0"), completed("x#0"), stepStarted("y#0")], T0 + 1);
      await commitOk(store(), a, [entry("loop.snapshot", "l#0", { iteration: 1, state: null, from: 4, keep: [] })], T0 + 2);
      const read = await store().readJournalForResume("a");
      expect(read.map((e) => [e.runId, e.seq])).toEqual([
        ["a", 1],
        ["a", 2],
        ["a", 3],
        ["a", 5],
      ]);
    });
  });
}
