import { describe, expect, it } from "vitest";
import type { Store } from "../../core/store.js";
import { T0, commitOk, entry, startRun, stepStarted } from "./harness.js";

/** searchJournal: full-text search over a run's indexed step results. */
export function searchSpec(store: () => Store): void {
  describe("searchJournal", () => {
    const done = (key: string, text?: string) =>
      entry("step.completed", key, text === undefined ? { result: key, attempt: 1 } : { result: key, attempt: 1, text });

    it("finds the run's indexed results by any of the query's words, best match first", async () => {
      const run = await startRun(store(), "r1"); // seqs 1, 2
      await commitOk(store(), run, [stepStarted("a#0"), done("a#0", "Solid-state batteries use a ceramic electrolyte")], T0 + 1); // 3, 4
      await commitOk(store(), run, [stepStarted("b#0"), done("b#0", "Lithium metal anodes grow dendrites in liquid electrolyte cells")], T0 + 2); // 5, 6
      await commitOk(store(), run, [stepStarted("c#0"), done("c#0")], T0 + 3); // 7, 8: not indexed
      const other = await startRun(store(), "r2");
      await commitOk(store(), other, [stepStarted("a#0"), done("a#0", "ceramic electrolyte in another run")], T0 + 4);

      const both = await store().searchJournal("r1", "ceramic electrolyte", 10);
      expect(both.map((hit) => [hit.seq, hit.opKey])).toEqual([
        [4, "a#0"],
        [6, "b#0"],
      ]);
      expect(both[0]!.text).toBe("Solid-state batteries use a ceramic electrolyte");
      expect((await store().searchJournal("r1", "DENDRITES?", 10)).map((hit) => hit.seq)).toEqual([6]);
      expect(await store().searchJournal("r1", "electrolyte", 1)).toHaveLength(1);
      expect(await store().searchJournal("r1", "nothing-like-this", 10)).toEqual([]);
      expect(await store().searchJournal("r1", "  !!! ", 10)).toEqual([]);
      expect(await store().searchJournal("ghost", "ceramic", 10)).toEqual([]);
    });

    it("indexes in the transaction of the outcome: a refused write indexes nothing", async () => {
      await startRun(store(), "r1");
      expect(await store().commit([{ runId: "r1", epoch: 0, entries: [done("a#0", "stale writer text")] }], T0 + 1)).toEqual([
        { ok: false, reason: "lease-lost" },
      ]);
      expect(await store().searchJournal("r1", "stale", 10)).toEqual([]);
    });
  });
}
