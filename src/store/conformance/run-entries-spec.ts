import { describe, expect, it } from "vitest";
import { decode } from "../../core/serialize.js";
import type { Store } from "../../core/store.js";
import { ValidationError } from "../../core/errors.js";
import { T0, commitOk, entry, startRun, stepStarted } from "./harness.js";

/** listRunEntries: one kind of entry of the runs created in a time range, keyset-paged, for aggregates. */
export function runEntriesSpec(store: () => Store): void {
  describe("listRunEntries", () => {
    /** Runs a (T0), b (T0+10, a child of a), c (T0+20): each with two completed steps; a also with a failed one. */
    async function seed(): Promise<void> {
      for (const [runId, at, parent] of [
        ["a", T0, null],
        ["b", T0 + 10, "a"],
        ["c", T0 + 20, null],
      ] as const) {
        const run = await startRun(store(), runId, at, "w1", { parentRunId: parent });
        await commitOk(
          store(),
          run,
          [
            stepStarted("x#0"),
            entry("step.completed", "x#0", { result: { costMicros: 1 }, attempt: 1 }),
            stepStarted("y#0"),
            entry("step.completed", "y#0", { result: { costMicros: 2 }, attempt: 1 }),
          ],
          at + 1,
        );
      }
    }

    it("lists one kind of entry of the runs created since a time, oldest run first, with each run's workflow and parent", async () => {
      await seed();
      const rows = await store().listRunEntries({ kind: "step.completed", createdAfter: T0 + 10, limit: 100 });
      expect(rows.map((row) => [row.entry.runId, row.entry.opKey, row.workflow, row.parentRunId, row.createdAt])).toEqual([
        ["b", "x#0", "solo:b", "a", T0 + 10],
        ["b", "y#0", "solo:b", "a", T0 + 10],
        ["c", "x#0", "solo:c", null, T0 + 20],
        ["c", "y#0", "solo:c", null, T0 + 20],
      ]);
      expect(rows.every((row) => row.entry.kind === "step.completed")).toBe(true);
      expect((decode(rows[1]!.entry.payload) as { result: { costMicros: number } }).result.costMicros).toBe(2);
      expect(await store().listRunEntries({ kind: "step.completed", createdAfter: T0 + 21, limit: 100 })).toEqual([]);
      expect(await store().listRunEntries({ kind: "run.completed", createdAfter: T0, limit: 100 })).toEqual([]);
    });

    it("pages by the last row without gaps or repeats, also within one run", async () => {
      await seed();
      const seen: string[] = [];
      let after: { createdAt: number; runId: string; seq: number } | undefined;
      for (let page = 0; page < 10; page++) {
        const rows = await store().listRunEntries({ kind: "step.completed", createdAfter: T0, limit: 4, ...(after ? { after } : {}) });
        seen.push(...rows.map((row) => `${row.entry.runId}:${row.entry.seq}`));
        if (rows.length < 4) break;
        const last = rows.at(-1)!;
        after = { createdAt: last.createdAt, runId: last.entry.runId, seq: last.entry.seq };
      }
      expect(seen).toEqual(["a:4", "a:6", "b:4", "b:6", "c:4", "c:6"]);
    });

    it("refuses a page size it cannot serve", async () => {
      await expect(store().listRunEntries({ kind: "step.completed", createdAfter: T0, limit: 0 })).rejects.toBeInstanceOf(ValidationError);
      await expect(store().listRunEntries({ kind: "step.completed", createdAfter: T0, limit: 1001 })).rejects.toBeInstanceOf(ValidationError);
    });
  });
}
