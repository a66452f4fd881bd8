import { describe, expect, it } from "vitest";
import { onCleanup } from "../../test/support/engines.js";
import { durableStoreUrl, postgresReachable } from "../../test/support/store-urls.js";
import { newEntry } from "../core/journal.js";
import { decode, encode } from "../core/serialize.js";
import type { CommitResult, RunWrite, Store } from "../core/store.js";
import { openStore } from "../store/open-store.js";
import { Committer } from "./committer.js";

const available = await postgresReachable();
const RUNS = 24;
const WRITES = 12;
const GROUPS = 3;

/** The real store, with every odd-numbered transaction held back before it starts, so a later one overtakes it when both are in flight. */
function overtaking(store: Store): Store {
  let n = 0;
  const slowed = Object.create(store) as Store;
  slowed.commit = async (writes: RunWrite[], now: number): Promise<CommitResult[]> => {
    n += 1;
    if (n % 2 === 1) await new Promise((resolve) => setTimeout(resolve, 15));
    return store.commit(writes, now);
  };
  return slowed;
}

describe.skipIf(!available)("committer on postgres", () => {
  it("keeps several transactions in flight and never lets a run's commit overtake its previous one", async () => {
    const store = await openStore(durableStoreUrl("postgres"));
    onCleanup(() => store.close());
    expect(store.commitWriters).toBeGreaterThan(1);
    const runIds = Array.from({ length: RUNS }, (_, i) => `r${i}`);
    for (const runId of runIds) {
      await store.createRun({ runId, workflow: "wf", version: "1", input: encode(null), claimFor: { workerId: "w", leaseMs: 60_000 } }, Date.now());
    }
    const committer = new Committer(overtaking(store), () => Date.now());
    const issued = new Map<string, Promise<CommitResult>[]>(runIds.map((runId) => [runId, []]));
    // Each round writes to a third of the runs, in its own tick, while the previous rounds are still
    // in flight: rounds of other runs may run beside them, a run's next round may not.
    for (let round = 0; round < WRITES * GROUPS; round++) {
      const i = Math.floor(round / GROUPS);
      for (const runId of runIds.filter((_, n) => n % GROUPS === round % GROUPS)) {
        const write = { runId, epoch: 1, entries: [newEntry("step.started", `s${i}#0`, { attempt: 1 })] };
        issued.get(runId)!.push(committer.commit(write));
      }
      await new Promise((resolve) => setImmediate(resolve));
    }
    // A stale writer is still fenced out while the pool runs.
    expect(await committer.commit({ runId: "r0", epoch: 0, entries: [newEntry("step.started", "stale#0", { attempt: 1 })] })).toEqual({
      ok: false,
      reason: "lease-lost",
    });
    for (const runId of runIds) {
      const results = await Promise.all(issued.get(runId)!);
      // Each commit landed right after its predecessor: it saw the run as the previous one left it.
      results.reduce((previous, result) => {
        expect(result).toEqual({ ok: true, firstSeq: previous + 1, lastSeq: previous + 1 });
        return previous + 1;
      }, 2);
      const journal = (await store.readJournal(runId)).slice(2);
      expect(journal.map((entry) => entry.opKey)).toEqual(Array.from({ length: WRITES }, (_, i) => `s${i}#0`));
      expect(journal.map((entry) => entry.seq)).toEqual(Array.from({ length: WRITES }, (_, i) => i + 3));
      expect(decode(journal[0]!.payload)).toEqual({ attempt: 1 });
    }
    expect(committer.peakInFlight).toBeGreaterThan(1);
    expect((await store.getRun("r0"))?.lastSeq).toBe(WRITES + 2);
  });
});
