import pg from "pg";
import { describe, expect, it } from "vitest";
import { onCleanup } from "../../../test/support/engines.js";
import { durableStoreUrl, postgresReachable } from "../../../test/support/store-urls.js";
import { newEntry } from "../../core/journal.js";
import { encode } from "../../core/serialize.js";
import type { RunWrite, Store } from "../../core/store.js";
import { openStore } from "../open-store.js";

const available = await postgresReachable();

/** Counts the statements every `pg` client of this process sends while `fn` runs. */
/**
 * The statements `fn` sends that write or frame a transaction. Background statements of the store's
 * other connections (its clock read or listener, which a loaded machine can schedule into the window)
 * are not the commit's and are not counted.
 */
async function statementsDuring(fn: () => Promise<unknown>): Promise<number> {
  const original = pg.Client.prototype.query;
  const sent: string[] = [];
  pg.Client.prototype.query = function counted(this: pg.Client, ...args: unknown[]) {
    const query = args[0];
    sent.push(typeof query === "string" ? query : String((query as { text?: unknown } | null)?.text ?? query));
    return (original as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof original;
  try {
    await fn();
  } finally {
    pg.Client.prototype.query = original;
  }
  return sent.filter((text) => /cairn_append|cairn_complete|cairn_create|journal|\b(BEGIN|COMMIT|INSERT|UPDATE|DELETE)\b/i.test(text)).length;
}

async function heldStore(runIds: string[]): Promise<Store> {
  const store = await openStore(durableStoreUrl("postgres"));
  onCleanup(() => store.close());
  for (const runId of runIds) {
    await store.createRun({ runId, workflow: "wf", version: "1", input: encode(null), claimFor: { workerId: "w", leaseMs: 60_000 } }, Date.now());
  }
  return store;
}

const step = (opKey: string): RunWrite["entries"][number] => newEntry("step.started", opKey, { attempt: 1 });

describe.skipIf(!available)("postgres commit round trips", () => {
  it("commits a batch of step entries to held runs in one statement", async () => {
    const store = await heldStore(["a", "b"]);
    await store.commit([{ runId: "a", epoch: 1, entries: [step("warm#0")] }], Date.now());
    let results: unknown;
    const sent = await statementsDuring(async () => {
      results = await store.commit(
        [
          { runId: "a", epoch: 1, entries: [step("x#0"), step("y#0")] },
          { runId: "b", epoch: 1, entries: [step("x#0")] },
          { runId: "a", epoch: 1, entries: [step("z#0")] },
        ],
        Date.now(),
      );
    });
    expect(sent).toBe(1);
    expect(results).toEqual([
      { ok: true, firstSeq: 4, lastSeq: 5 },
      { ok: true, firstSeq: 3, lastSeq: 3 },
      { ok: true, firstSeq: 6, lastSeq: 6 },
    ]);
    expect((await store.readJournal("a")).map((entry) => entry.opKey)).toEqual([null, null, "warm#0", "x#0", "y#0", "z#0"]);
  });

  it("commits one run's entries as one plain statement, and refuses a fenced one having written nothing", async () => {
    const store = await heldStore(["a"]);
    await store.commit([{ runId: "a", epoch: 1, entries: [step("warm#0")] }], Date.now());
    let results: unknown;
    const sent = await statementsDuring(async () => {
      results = await store.commit(
        [
          { runId: "a", epoch: 1, entries: [step("x#0"), step("y#0")] },
          { runId: "a", epoch: 1, entries: [step("z#0")] },
        ],
        Date.now(),
      );
    });
    expect(sent).toBe(1);
    expect(results).toEqual([
      { ok: true, firstSeq: 4, lastSeq: 5 },
      { ok: true, firstSeq: 6, lastSeq: 6 },
    ]);
    const journal = await store.readJournal("a");
    expect(journal.map((entry) => [entry.seq, entry.opKey, entry.epoch])).toEqual([
      [1, null, 0],
      [2, null, 1],
      [3, "warm#0", 1],
      [4, "x#0", 1],
      [5, "y#0", 1],
      [6, "z#0", 1],
    ]);
    const run = await store.getRun("a");
    expect(run).toMatchObject({ lastSeq: 6, updatedAt: journal.at(-1)!.at });
    expect(await store.commit([{ runId: "a", epoch: 2, entries: [step("late#0")] }], Date.now())).toEqual([{ ok: false, reason: "lease-lost" }]);
    expect((await store.readJournal("a")).map((entry) => entry.seq)).toEqual([1, 2, 3, 4, 5, 6]);
    expect((await store.getRun("a"))?.lastSeq).toBe(6);
  });

  it("writes nothing of a one-statement batch with a fenced write, and refuses only that write", async () => {
    const store = await heldStore(["a", "b"]);
    const results = await store.commit(
      [
        { runId: "a", epoch: 1, entries: [step("x#0")] },
        { runId: "b", epoch: 2, entries: [step("x#0")] },
      ],
      Date.now(),
    );
    expect(results).toEqual([
      { ok: true, firstSeq: 3, lastSeq: 3 },
      { ok: false, reason: "lease-lost" },
    ]);
    expect((await store.readJournal("a")).map((entry) => entry.seq)).toEqual([1, 2, 3]);
    expect((await store.readJournal("b")).map((entry) => entry.seq)).toEqual([1, 2]);
    expect((await store.getRun("b"))?.lastSeq).toBe(2);
  });
  it("completes a top-level run in one statement, with the row, the entries and its open questions as the locking path leaves them", async () => {
    const store = await heldStore(["fast", "slow", "other"]);
    for (const runId of ["fast", "slow"]) {
      const ask = newEntry("human.requested", "ask#0", { requestId: `${runId}:ask#0`, question: "Ship?", options: ["yes"], timeoutAt: null });
      expect((await store.commit([{ runId, epoch: 1, entries: [ask] }], Date.now()))[0]).toMatchObject({ ok: true });
    }
    const finish = (runId: string): RunWrite[] => [
      { runId, epoch: 1, entries: [newEntry("step.completed", "last#0", { result: 7, attempt: 1 })] },
      { runId, epoch: 1, entries: [newEntry("run.completed", null, { output: { answer: 7 } })] },
    ];
    let fastResults: unknown;
    const sent = await statementsDuring(async () => (fastResults = await store.commit(finish("fast"), Date.now())));
    expect(sent).toBe(1);
    expect(fastResults).toEqual([
      { ok: true, firstSeq: 4, lastSeq: 4 },
      { ok: true, firstSeq: 5, lastSeq: 5 },
    ]);
    // The same writes through the locking path (a batch of two runs is not a completion alone).
    const slowResults = await store.commit([...finish("slow"), { runId: "other", epoch: 1, entries: [step("x#0")] }], Date.now());
    expect(slowResults).toEqual([...(fastResults as unknown[]), { ok: true, firstSeq: 3, lastSeq: 3 }]);
    const [fast, slow] = [await store.getRun("fast"), await store.getRun("slow")];
    const comparable = (run: typeof fast) => ({ ...run!, runId: "", updatedAt: 0, finishedAt: run!.finishedAt === null ? null : 1, createdAt: 0 });
    expect(comparable(fast)).toEqual(comparable(slow));
    expect(fast).toMatchObject({ status: "completed", output: encode({ answer: 7 }), leaseOwner: null, leaseExpiresAt: null, wakeAt: null, waitingFor: null });
    expect(await store.getHumanRequest("fast:ask#0")).toMatchObject({ status: "closed", closedReason: "completed", answeredAt: fast!.finishedAt });
    const kinds = async (runId: string) => (await store.readJournal(runId)).map((entry) => [entry.seq, entry.kind, entry.opKey, entry.epoch]);
    expect((await kinds("fast")).slice(0, 5)).toEqual(await kinds("slow"));
  });

  it("creates a run, pending or claimed, in one statement, with the row and entries the locking path writes", async () => {
    const store = await heldStore(["warm"]);
    const claimFor = { workerId: "w", leaseMs: 60_000 };
    const run = (runId: string, claimed: boolean) => ({ runId, workflow: "wf", version: "1", input: encode({ n: 1 }), ...(claimed ? { claimFor } : {}) });
    const entries = async (runId: string) => (await store.readJournal(runId)).map(({ runId: _, at: __, ...entry }) => entry);
    const comparable = (record: { runId: string; createdAt: number; updatedAt: number; leaseExpiresAt: number | null }) => ({
      ...record,
      runId: "",
      createdAt: 0,
      updatedAt: 0,
      leaseExpiresAt: record.leaseExpiresAt === null ? null : record.leaseExpiresAt - record.createdAt,
    });
    for (const claimed of [false, true]) {
      const [fast, slow] = claimed ? ["fast-claimed", "slow-claimed"] : ["fast", "slow"];
      let created: Awaited<ReturnType<Store["createRun"]>> | undefined;
      const sent = await statementsDuring(async () => (created = await store.createRun(run(fast, claimed), Date.now())));
      expect(sent).toBe(1);
      // A batch repeating an id takes the locking transaction.
      const [viaLock] = await store.createRuns([run(slow, claimed), run(slow, claimed)], Date.now());
      expect(created!.created).toBe(true);
      expect(await store.getRun(fast)).toEqual(created!.run);
      expect(comparable(created!.run)).toEqual(comparable(viaLock!.run));
      expect(created!.run.createdAt).toBe(created!.run.updatedAt);
      if (claimed) expect(created!.run.leaseExpiresAt).toBe(created!.run.createdAt + claimFor.leaseMs);
      expect(await entries(fast)).toEqual(await entries(slow));
      expect((await store.readJournal(fast)).every((entry) => entry.at === created!.run.createdAt)).toBe(true);
      expect((await entries(fast)).map((entry) => entry.kind)).toEqual(claimed ? ["run.created", "run.claimed"] : ["run.created"]);
    }
    // A taken id: the existing row, nothing written.
    const again = await store.createRun({ ...run("fast", true), input: encode({ n: 2 }) }, Date.now());
    expect(again.created).toBe(false);
    expect(again.run).toMatchObject({ status: "pending", input: encode({ n: 1 }) });
    expect(await store.readJournal("fast")).toHaveLength(1);
    // A batch of new and taken ids: the taken one reads back, the new ones are created in order.
    const batch = await store.createRuns([run("n1", false), run("fast", false), run("n2", true)], Date.now());
    expect(batch.map((result) => [result.run.runId, result.created, result.run.status])).toEqual([
      ["n1", true, "pending"],
      ["fast", false, "pending"],
      ["n2", true, "running"],
    ]);
    const [next] = await store.claimRuns({ workerId: "w2", now: Date.now(), leaseMs: 60_000, limit: 1, workflows: [{ name: "wf", version: "1" }] });
    expect(next?.runId).toBe("fast");
    // A bad input is refused before anything is written.
    await expect(store.createRun({ ...run("bad", false), input: "not a payload" }, Date.now())).rejects.toThrow(/not an encoded payload/);
    expect(await store.getRun("bad")).toBeUndefined();
  });

  it("leaves a child run's completion (its parent must be woken) and a fenced one to the locking path", async () => {
    const store = await heldStore(["p"]);
    const child = newEntry("child.started", "kid#0", { childRunId: "kid", workflow: "wf", version: "1", input: null });
    await store.commit([{ runId: "p", epoch: 1, entries: [child, newEntry("run.suspended", null, { wakeAt: null, waitingFor: [] })] }], Date.now());
    const [claimed] = await store.claimRuns({ workerId: "w", now: Date.now(), leaseMs: 60_000, limit: 1, workflows: [{ name: "wf", version: "1" }] });
    expect(claimed?.runId).toBe("kid");
    const stale = await store.commit([{ runId: "kid", epoch: claimed!.leaseEpoch + 1, entries: [newEntry("run.completed", null, { output: 1 })] }], Date.now());
    expect(stale).toEqual([{ ok: false, reason: "lease-lost" }]);
    const done = await store.commit([{ runId: "kid", epoch: claimed!.leaseEpoch, entries: [newEntry("run.completed", null, { output: 1 })] }], Date.now());
    expect(done[0]).toMatchObject({ ok: true });
    expect(await store.getRun("p")).toMatchObject({ status: "suspended" });
    expect((await store.getRun("p"))!.wakeAt).not.toBeNull();
  });
});
