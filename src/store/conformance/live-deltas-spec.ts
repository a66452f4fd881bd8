import { describe, expect, it } from "vitest";
import type { NewLiveDelta } from "../../core/live-delta-store.js";
import type { Store } from "../../core/store.js";
import { T0 } from "./harness.js";

const rec = (runId: string, opKey: string, attempt: number, kind: NewLiveDelta["kind"], ...pieces: unknown[]): NewLiveDelta => ({
  runId,
  opKey,
  attempt,
  kind,
  pieces,
});
const text = (t: string) => ({ kind: "text", text: t });

/** Live deltas between processes (core/live-delta-store.ts): advertisements, records by id, end, prune. */
export function liveDeltasSpec(store: () => Store): void {
  describe("live deltas", () => {
    it("lists the runs other origins advertise until their rows expire or are retired", async () => {
      await store().advertiseLiveDeltas("server-a", ["r1", "r2"], T0 + 100);
      await store().advertiseLiveDeltas("server-b", ["r2"], T0 + 50);
      expect((await store().listStreamedRuns("worker", T0)).sort()).toEqual(["r1", "r2"]);
      // A process's own advertisements are not streams of another process.
      expect(await store().listStreamedRuns("server-a", T0)).toEqual(["r2"]);
      expect((await store().listStreamedRuns("worker", T0 + 50)).sort()).toEqual(["r1", "r2"]);
      expect(await store().listStreamedRuns("server-a", T0 + 50)).toEqual([]);
      // Renewed: current again.
      await store().advertiseLiveDeltas("server-b", ["r2"], T0 + 500);
      expect(await store().listStreamedRuns("server-a", T0 + 200)).toEqual(["r2"]);
      expect(await store().listStreamedRuns("worker", T0 + 200)).toEqual(["r2"]);
      await store().retireLiveDeltas("server-b", ["r2"]);
      expect(await store().listStreamedRuns("server-a", T0 + 10)).toEqual([]);
      expect((await store().listStreamedRuns("worker", T0 + 10)).sort()).toEqual(["r1", "r2"]);
      await store().advertiseLiveDeltas("server-b", ["r3", "r4"], T0 + 100);
      await store().retireLiveDeltas("server-b");
      await store().retireLiveDeltas("server-a");
      expect(await store().listStreamedRuns("worker", T0)).toEqual([]);
    });

    it("reads other origins' records of the given runs in id order, after a given id, up to a limit", async () => {
      await store().writeLiveDeltas("worker", [rec("r1", "turn#0/0/model#0", 1, "full", text("Hel")), rec("r2", "m", 1, "full")], T0);
      await store().writeLiveDeltas(
        "worker",
        [rec("r1", "turn#0/0/model#0", 1, "more", text("lo"), { kind: "tool-input", id: "c1", name: "t", text: '{"a":' })],
        T0 + 1,
      );
      await store().writeLiveDeltas("server", [rec("r1", "x", 1, "full", text("mine"))], T0 + 2);
      const all = await store().readLiveDeltas(["r1"], 0, "server");
      expect(all.map((r) => [r.runId, r.opKey, r.attempt, r.kind, r.origin, r.at])).toEqual([
        ["r1", "turn#0/0/model#0", 1, "full", "worker", T0],
        ["r1", "turn#0/0/model#0", 1, "more", "worker", T0 + 1],
      ]);
      expect(all[0]!.pieces).toEqual([text("Hel")]);
      expect(all[1]!.pieces).toEqual([text("lo"), { kind: "tool-input", id: "c1", name: "t", text: '{"a":' }]);
      expect(all[1]!.id).toBeGreaterThan(all[0]!.id);
      expect(await store().readLiveDeltas(["r1"], all[0]!.id, "server")).toEqual([all[1]]);
      expect(await store().readLiveDeltas(["r1"], all[1]!.id, "server")).toEqual([]);
      expect((await store().readLiveDeltas(["r1", "r2"], 0, "server", 2)).map((r) => r.runId)).toEqual(["r1", "r2"]);
      // The writer does not read its own; a reader of nothing gets nothing.
      expect((await store().readLiveDeltas(["r1"], 0, "worker")).map((r) => r.origin)).toEqual(["server"]);
      expect(await store().readLiveDeltas([], 0, "server")).toEqual([]);
    });

    it("an end record drops the step's earlier records (every attempt), stays readable itself, and ids are never reused", async () => {
      await store().writeLiveDeltas(
        "w",
        [rec("r", "m#0", 1, "full", text("a")), rec("r", "m#0", 2, "full", text("b")), rec("r", "n#0", 1, "full", text("c"))],
        T0,
      );
      const before = await store().readLiveDeltas(["r"], 0, "s");
      const highest = Math.max(...before.map((r) => r.id));
      await store().writeLiveDeltas("w", [rec("r", "m#0", 2, "end")], T0 + 1);
      const after = await store().readLiveDeltas(["r"], 0, "s");
      expect(after.map((r) => [r.opKey, r.attempt, r.kind])).toEqual([
        ["n#0", 1, "full"],
        ["m#0", 2, "end"],
      ]);
      expect(after[1]!.pieces).toEqual([]);
      expect(after[1]!.id).toBeGreaterThan(highest);
      // A reader that had seen the deleted rows still learns of the end.
      expect((await store().readLiveDeltas(["r"], highest, "s")).map((r) => r.kind)).toEqual(["end"]);
    });

    it("prunes the records of steps silent since the cut-off and expired advertisements", async () => {
      await store().writeLiveDeltas("w", [rec("r", "old#0", 1, "full", text("x")), rec("r", "busy#0", 1, "full", text("y"))], T0);
      await store().writeLiveDeltas("w", [rec("r", "busy#0", 1, "more", text("z"))], T0 + 1000);
      await store().advertiseLiveDeltas("s", ["r"], T0 + 10);
      await store().advertiseLiveDeltas("s", ["q"], T0 + 5000);
      expect(await store().pruneLiveDeltas(T0 + 500)).toBe(1);
      // A step still streaming keeps its first record (a late reader needs it to catch up).
      expect((await store().readLiveDeltas(["r"], 0, "s2")).map((r) => [r.opKey, r.kind])).toEqual([
        ["busy#0", "full"],
        ["busy#0", "more"],
      ]);
      expect(await store().listStreamedRuns("w", T0)).toEqual(["q"]);
      expect(await store().pruneLiveDeltas(T0 + 2000)).toBe(2);
      expect(await store().readLiveDeltas(["r"], 0, "s2")).toEqual([]);
    });

    it("tells live-delta listeners of writes, when the store pushes", async () => {
      const onLiveDeltas = store().onLiveDeltas?.bind(store());
      if (!onLiveDeltas) return;
      let calls = 0;
      const stop = onLiveDeltas(() => void calls++);
      try {
        const listening = (store() as { listeningForLiveDeltas?: () => Promise<void> }).listeningForLiveDeltas;
        await listening?.call(store());
        await store().writeLiveDeltas("w", [rec("r", "m#0", 1, "full", text("x"))], T0);
        const deadline = Date.now() + 5000;
        while (calls === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
        expect(calls).toBeGreaterThan(0);
      } finally {
        stop();
      }
    });
  });
}
