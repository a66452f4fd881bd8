import { describe, expect, it } from "vitest";
import type { RunRecord } from "../../core/run.js";
import { decode, encode } from "../../core/serialize.js";
import type { Store } from "../../core/store.js";
import { T0, commitOk, dataOf, entry, mustGet, newRun, startRun, stepStarted, suspend } from "./harness.js";

/** createRun, getRun, readJournal and listRuns. */
export function runsSpec(store: () => Store): void {
  describe("createRun", () => {
    it("creates a pending run at epoch 0 with its run.created entry at seq 1", async () => {
      const { run, created } = await store().createRun(newRun("r1", { input: encode({ topic: "x" }) }), T0);
      const expected: RunRecord = {
        runId: "r1",
        workflow: "wf",
        version: "1",
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
        leaseEpoch: 0,
        lastSeq: 1,
        wakePending: false,
        createdAt: T0,
        updatedAt: T0,
        finishedAt: null,
      };
      expect(created).toBe(true);
      expect(run).toEqual(expected);
      expect(await store().getRun("r1")).toEqual(expected);
      const journal = await store().readJournal("r1");
      expect(journal).toHaveLength(1);
      expect(journal[0]).toMatchObject({ runId: "r1", seq: 1, kind: "run.created", opKey: null, epoch: 0, at: T0 });
      const data = dataOf(journal[0], "run.created");
      expect(data).toEqual({ workflow: "wf", version: "1", input: { topic: "x" } });
      expect(Object.keys(data)).not.toContain("parentRunId");
    });

    it("records the parent in the row and in run.created", async () => {
      const { run } = await store().createRun(newRun("child", { parentRunId: "p", parentOpKey: "sub#0" }), T0);
      expect(run).toMatchObject({ parentRunId: "p", parentOpKey: "sub#0" });
      const [created] = await store().readJournal("child");
      expect(dataOf(created, "run.created")).toMatchObject({ parentRunId: "p", parentOpKey: "sub#0" });
    });

    it("returns the existing run and writes nothing when the runId exists", async () => {
      const first = await store().createRun(newRun("r1"), T0);
      const again = await store().createRun(newRun("r1", { workflow: "other", input: encode("different") }), T0 + 5);
      expect(again).toEqual({ run: first.run, created: false });
      expect(await store().readJournal("r1")).toHaveLength(1);
    });

    it("createRuns creates several runs, finds existing ones and repeats, in order", async () => {
      const before = await store().createRun(newRun("old"), T0);
      const results = await store().createRuns([newRun("a"), newRun("old"), newRun("b", { input: encode("b") }), newRun("a", { workflow: "other" })], T0 + 5);
      expect(results.map((r) => [r.run.runId, r.created])).toEqual([
        ["a", true],
        ["old", false],
        ["b", true],
        ["a", false],
      ]);
      expect(results[1]!.run).toEqual(before.run);
      expect(results[3]!.run).toEqual(results[0]!.run);
      expect(await store().getRun("b")).toEqual(results[2]!.run);
      expect(results[2]!.run).toMatchObject({ status: "pending", input: encode("b"), lastSeq: 1, createdAt: T0 + 5 });
      for (const id of ["a", "b"]) expect((await store().readJournal(id)).map((e) => e.kind)).toEqual(["run.created"]);
      expect(await store().createRuns([], T0)).toEqual([]);
    });

    it("creates a run already claimed for a worker, exactly as a claim would leave it", async () => {
      const claimFor = { workerId: "w9", leaseMs: 30_000 };
      const [held, plain, again] = await store().createRuns(
        [newRun("held", { workflow: "solo:held", claimFor }), newRun("plain"), newRun("held", { claimFor: { workerId: "other", leaseMs: 5 } })],
        T0,
      );
      expect(held!.created).toBe(true);
      expect(held!.run).toMatchObject({
        status: "running",
        leaseOwner: "w9",
        leaseEpoch: 1,
        leaseExpiresAt: T0 + 30_000,
        lastSeq: 2,
        createdAt: T0,
        updatedAt: T0,
      });
      expect(await store().getRun("held")).toEqual(held!.run);
      expect(again).toEqual({ run: held!.run, created: false });
      expect(plain!.run).toMatchObject({ status: "pending", leaseOwner: null, leaseEpoch: 0, lastSeq: 1 });
      const journal = await store().readJournal("held");
      expect(journal.map((e) => [e.seq, e.kind, e.epoch, e.at])).toEqual([
        [1, "run.created", 0, T0],
        [2, "run.claimed", 1, T0],
      ]);
      expect(dataOf(journal[1], "run.claimed")).toEqual({ workerId: "w9", epoch: 1, from: "pending" });
      expect(await store().claimRuns({ workerId: "w2", now: T0 + 1, leaseMs: 1000, limit: 10, workflows: [{ name: "solo:held", version: "1" }] })).toEqual([]);
      await commitOk(store(), held!.run, [stepStarted("s#0")], T0 + 2);
      const single = await store().createRun(newRun("one", { claimFor }), T0 + 3);
      expect(single.run).toMatchObject({ status: "running", leaseOwner: "w9", leaseEpoch: 1, lastSeq: 2 });
    });

    it("createRuns writes nothing when one run of the batch is refused", async () => {
      await expect(store().createRuns([newRun("fine"), newRun("bad", { input: "{not json" })], T0)).rejects.toMatchObject({ code: "INVALID_INPUT" });
      expect(await store().getRun("fine")).toBeUndefined();
    });

    it("returns the current row of an existing run, not the one it was created with", async () => {
      const held = await startRun(store(), "r1");
      const again = await store().createRun(newRun("r1", { workflow: "solo:r1" }), T0 + 5);
      expect(again).toEqual({ run: held, created: false });
    });

    it("lets exactly one of many concurrent creates win", async () => {
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => store().createRun(newRun("race", { input: encode(i) }), T0 + i)));
      expect(results.filter((result) => result.created)).toHaveLength(1);
      const winner = results.find((result) => result.created)?.run;
      for (const result of results) expect(result.run.input).toBe(winner?.input);
      expect(await store().readJournal("race")).toHaveLength(1);
    });

    it("rejects an input that is not an encoded payload, writing nothing", async () => {
      await expect(store().createRun(newRun("bad", { input: "{not json" }), T0)).rejects.toMatchObject({ code: "INVALID_INPUT" });
      expect(await store().getRun("bad")).toBeUndefined();
    });

    it("accepts an undefined input (encoded as the empty string)", async () => {
      const { run } = await store().createRun(newRun("empty", { input: encode(undefined) }), T0);
      expect(run.input).toBe("");
      expect(dataOf((await store().readJournal("empty"))[0], "run.created").input).toBeUndefined();
    });

    it("getRun returns undefined for an unknown run", async () => {
      expect(await store().getRun("nope")).toBeUndefined();
    });
  });

  describe("readJournal", () => {
    it("returns entries in seq order, after a seq, limited", async () => {
      const run = await startRun(store(), "r1");
      await commitOk(store(), run, [stepStarted("a#0"), stepStarted("b#0"), stepStarted("c#0")], T0 + 1);
      const all = await store().readJournal("r1");
      expect(all.map((e) => [e.seq, e.kind, e.opKey])).toEqual([
        [1, "run.created", null],
        [2, "run.claimed", null],
        [3, "step.started", "a#0"],
        [4, "step.started", "b#0"],
        [5, "step.started", "c#0"],
      ]);
      expect((await store().readJournal("r1", { afterSeq: 2 })).map((e) => e.seq)).toEqual([3, 4, 5]);
      expect((await store().readJournal("r1", { limit: 2 })).map((e) => e.seq)).toEqual([1, 2]);
      expect((await store().readJournal("r1", { afterSeq: 2, limit: 2 })).map((e) => e.seq)).toEqual([3, 4]);
      expect(await store().readJournal("r1", { afterSeq: 5 })).toEqual([]);
      expect(await store().readJournal("nope")).toEqual([]);
    });

    it("keeps payloads byte for byte", async () => {
      const run = await startRun(store(), "r1");
      const value = { text: 'naïve 🙂 \u0000 "quoted"', when: new Date(T0), big: 10n ** 20n, nested: new Map([["k", new Set([1])]]) };
      await commitOk(store(), run, [entry("step.completed", "a#0", { result: value, attempt: 1 })], T0 + 1);
      const [stored] = await store().readJournal("r1", { afterSeq: 2 });
      expect(stored?.payload).toBe(encode({ result: value, attempt: 1 }));
      expect(decode<{ result: unknown }>(stored?.payload).result).toEqual(value);
    });
  });

  describe("listRuns", () => {
    async function createAt(ids: string[], at: number, extra: Parameters<typeof newRun>[1] = {}): Promise<void> {
      for (const id of ids) await store().createRun(newRun(id, extra), at);
    }

    it("lists newest first, ties by runId descending", async () => {
      await createAt(["a", "c", "b"], T0);
      await createAt(["d"], T0 + 1);
      await createAt(["e"], T0 - 1);
      const page = await store().listRuns({});
      expect(page.runs.map((run) => run.runId)).toEqual(["d", "c", "b", "a", "e"]);
      expect(page.nextCursor).toBeUndefined();
    });

    it("pages through every run exactly once with an opaque cursor", async () => {
      await createAt(["r1", "r2", "r3"], T0);
      await createAt(["r4", "r5"], T0 + 1);
      await createAt(["r6", "r7"], T0 + 2);
      const seen: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page: Awaited<ReturnType<Store["listRuns"]>> = await store().listRuns({ limit: 3, cursor });
        seen.push(...page.runs.map((run) => run.runId));
        cursor = page.nextCursor;
        pages++;
      } while (cursor !== undefined);
      expect(pages).toBe(3);
      expect(seen).toEqual(["r7", "r6", "r5", "r4", "r3", "r2", "r1"]);
    });

    it("gives no cursor when the last page is exactly full", async () => {
      await createAt(["a", "b", "c", "d"], T0);
      const first = await store().listRuns({ limit: 2 });
      expect(first.nextCursor).toBeDefined();
      const second = await store().listRuns({ limit: 2, cursor: first.nextCursor });
      expect(second.runs.map((run) => run.runId)).toEqual(["b", "a"]);
      expect(second.nextCursor).toBeUndefined();
    });

    it("filters by status, workflow, parent and creation time (bounds exclusive)", async () => {
      await createAt(["p1"], T0, { workflow: "parent" });
      await createAt(["k1", "k2"], T0 + 10, { workflow: "kid", parentRunId: "p1", parentOpKey: "kid#0" });
      await createAt(["k3"], T0 + 20, { workflow: "kid", parentRunId: "other" });
      const held = await startRun(store(), "s1", T0 + 30);
      await suspend(store(), held, null, T0 + 31);
      const ids = async (query: Parameters<Store["listRuns"]>[0]) => (await store().listRuns(query)).runs.map((run) => run.runId);
      expect(await ids({ workflow: "kid" })).toEqual(["k3", "k2", "k1"]);
      expect(await ids({ parentRunId: "p1" })).toEqual(["k2", "k1"]);
      expect(await ids({ status: ["suspended"] })).toEqual(["s1"]);
      expect(await ids({ status: ["pending", "suspended"], workflow: "kid" })).toEqual(["k3", "k2", "k1"]);
      expect(await ids({ status: ["completed"] })).toEqual([]);
      expect(await ids({ createdAfter: T0 + 10 })).toEqual(["s1", "k3"]);
      expect(await ids({ createdBefore: T0 + 10 })).toEqual(["p1"]);
      expect(await ids({ createdAfter: T0, createdBefore: T0 + 20 })).toEqual(["k2", "k1"]);
      const first = await store().listRuns({ workflow: "kid", limit: 1 });
      expect((await store().listRuns({ workflow: "kid", limit: 5, cursor: first.nextCursor })).runs.map((run) => run.runId)).toEqual(["k2", "k1"]);
    });

    it("lists top-level runs only (parentRunId: null), searches input and tags, and counts what a listing's filters hold", async () => {
      await createAt(["p1"], T0, { workflow: "parent", input: encode({ customer: "Needle-Co" }), tags: { team: "alpha" } });
      await createAt(["k1", "k2"], T0 + 10, { workflow: "kid", parentRunId: "p1", parentOpKey: "kid#0" });
      await createAt(["p2"], T0 + 20, { workflow: "parent" });
      const ids = async (query: Parameters<Store["listRuns"]>[0]) => (await store().listRuns(query)).runs.map((run) => run.runId);
      expect(await ids({ parentRunId: null })).toEqual(["p2", "p1"]);
      expect(await ids({ q: "needle-co" })).toEqual(["p1"]);
      expect(await ids({ q: "TEAM:ALP" })).toEqual(["p1"]);
      const total = async (filter: Parameters<Store["countRuns"]>[0]) => (await store().countRuns(filter)).reduce((sum, group) => sum + group.count, 0);
      expect(await total({})).toBe(4);
      expect(await total({ parentRunId: null })).toBe(2);
      expect(await total({ workflow: "kid", createdAfter: T0 })).toBe(2);
      expect(await total({ q: "needle" })).toBe(1);
      expect(await total({ status: ["completed"] })).toBe(0);
      expect(await store().countRuns({ parentRunId: null })).toEqual([{ workflow: "parent", status: "pending", count: 2 }]);
    });

    it("excludeSystem leaves out runs of cairn.* workflows from listings and counts, unless the workflow filter names one", async () => {
      // System runs interleaved with people's, and names a LIKE, a case-insensitive compare or a missing dot would take for system ones.
      const people = ["cairn", "Cairn.x", "cairn_alert", "cairnx.y", "wf"];
      for (let i = 0; i < 5; i++) {
        await store().createRun(newRun(`alert-${i}`, { workflow: "cairn.alert" }), T0 + i * 10);
        await store().createRun(newRun(`user-${i}`, { workflow: people[i] }), T0 + i * 10 + 1);
      }
      await store().createRun(newRun("other-system", { workflow: "cairn.other" }), T0 + 100);
      const ids = async (query: Parameters<Store["listRuns"]>[0]) => (await store().listRuns(query)).runs.map((run) => run.runId);
      const users = ["user-4", "user-3", "user-2", "user-1", "user-0"];
      expect(await ids({ excludeSystem: true })).toEqual(users);
      expect(await ids({})).toHaveLength(11);
      expect(await ids({ excludeSystem: false })).toHaveLength(11);
      expect(await ids({ excludeSystem: true, workflow: "cairn.alert" })).toEqual(["alert-4", "alert-3", "alert-2", "alert-1", "alert-0"]);
      // Full pages: the filter is in the query, not applied to a fetched page.
      const first = await store().listRuns({ excludeSystem: true, limit: 2 });
      expect(first.runs.map((run) => run.runId)).toEqual(["user-4", "user-3"]);
      const second = await store().listRuns({ excludeSystem: true, limit: 2, cursor: first.nextCursor });
      expect(second.runs.map((run) => run.runId)).toEqual(["user-2", "user-1"]);
      const counts = await store().countRuns({ excludeSystem: true });
      expect(counts.map((group) => group.workflow).sort()).toEqual([...people].sort());
      expect(counts.reduce((sum, group) => sum + group.count, 0)).toBe(5);
      expect(await store().countRuns({ excludeSystem: true, workflow: "cairn.alert" })).toEqual([{ workflow: "cairn.alert", status: "pending", count: 5 }]);
      expect((await store().countRuns({})).reduce((sum, group) => sum + group.count, 0)).toBe(11);
    });

    it("filters by run id prefix in the query: full pages among interleaved foreign runs, % and _ as text", async () => {
      // 30 runs of namespace "a/" interleaved with 90 foreign ones, some that a LIKE or a
      // case-insensitive compare would take for ours.
      const foreign = (i: number) => [`b/${i}`, `A/${i}`, i % 2 === 0 ? `a_${i}` : `a%${i}`];
      for (let i = 0; i < 30; i++) {
        for (const id of foreign(i)) await store().createRun(newRun(id), T0 + i * 4);
        await store().createRun(newRun(`a/${String(i).padStart(2, "0")}`), T0 + i * 4 + 1);
      }
      await store().createRun(newRun("a"), T0 + 500);
      await store().createRun(newRun("a/\u{1F600}"), T0 + 501);
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const page: Awaited<ReturnType<Store["listRuns"]>> = await store().listRuns({ runIdPrefix: "a/", limit: 7, cursor });
        if (page.nextCursor) expect(page.runs).toHaveLength(7);
        seen.push(...page.runs.map((run) => run.runId));
        cursor = page.nextCursor;
      } while (cursor);
      const ours = ["a/\u{1F600}", ...Array.from({ length: 30 }, (_, i) => `a/${String(29 - i).padStart(2, "0")}`)];
      expect(seen).toEqual(ours);
      expect((await store().listRuns({ runIdPrefix: "a%", limit: 100 })).runs.map((run) => run.runId)).toHaveLength(15);
      expect((await store().listRuns({ runIdPrefix: "a_1", limit: 100 })).runs.map((run) => run.runId).sort()).toEqual([
        "a_10",
        "a_12",
        "a_14",
        "a_16",
        "a_18",
      ]);
      expect((await store().listRuns({ runIdPrefix: "a/\u{1F600}" })).runs.map((run) => run.runId)).toEqual(["a/\u{1F600}"]);
      expect((await store().listRuns({ runIdPrefix: "a/2", workflow: "wf", limit: 3 })).runs.map((run) => run.runId)).toEqual(["a/29", "a/28", "a/27"]);
    });

    it("filters by text (q): run id, workflow or error message, ignoring case, % and _ as text", async () => {
      await createAt(["order-17", "ORDER-18"], T0, { workflow: "ship" });
      await createAt(["r1"], T0 + 1, { workflow: "Reorder-Stock" });
      await createAt(["r2"], T0 + 2, { workflow: "billing" });
      await createAt(["r%_x"], T0 + 3, { workflow: "w" });
      const failed = await startRun(store(), "r3", T0 + 4);
      await commitOk(
        store(),
        failed,
        [entry("run.failed", null, { error: { name: "Error", message: "Card DECLINED by bank", stack: "at charge (order.js:1)" } })],
        T0 + 5,
      );
      const ids = async (query: Parameters<Store["listRuns"]>[0]) => (await store().listRuns(query)).runs.map((run) => run.runId);
      expect(await ids({ q: "order" })).toEqual(["r1", "order-17", "ORDER-18"]);
      expect(await ids({ q: "declined" })).toEqual(["r3"]);
      expect(await ids({ q: "charge" }), "the stack is not searched, only the message").toEqual([]);
      expect(await ids({ q: "%" })).toEqual(["r%_x"]);
      expect(await ids({ q: "r_" }), "_ is not a wildcard").toEqual([]);
      expect(await ids({ q: "%_" })).toEqual(["r%_x"]);
      expect(await ids({ q: "order", workflow: "ship", limit: 1 })).toEqual(["order-17"]);
      const first = await store().listRuns({ q: "ORDER", limit: 2 });
      expect(first.nextCursor).toBeDefined();
      expect(await ids({ q: "ORDER", limit: 2, cursor: first.nextCursor })).toEqual(["ORDER-18"]);
    });

    it("returns 50 runs by default and caps large limits instead of failing", async () => {
      for (let i = 0; i < 55; i++) await store().createRun(newRun(`r${String(i).padStart(2, "0")}`), T0 + i);
      const page = await store().listRuns({});
      expect(page.runs).toHaveLength(50);
      expect(page.runs[0]?.runId).toBe("r54");
      expect(page.nextCursor).toBeDefined();
      expect((await store().listRuns({ limit: 100_000 })).runs).toHaveLength(55);
    });

    it("rejects an invalid cursor or limit with a ValidationError", async () => {
      await expect(store().listRuns({ cursor: "garbage!" })).rejects.toMatchObject({ code: "INVALID_INPUT" });
      await expect(store().listRuns({ cursor: Buffer.from('{"a":1}').toString("base64url") })).rejects.toMatchObject({ code: "INVALID_INPUT" });
      await expect(store().listRuns({ limit: 0 })).rejects.toMatchObject({ code: "INVALID_INPUT" });
      await expect(store().listRuns({ limit: 2.5 })).rejects.toMatchObject({ code: "INVALID_INPUT" });
    });

    it("returns whole rows equal to getRun", async () => {
      const held = await startRun(store(), "r1");
      const [listed] = (await store().listRuns({})).runs;
      expect(listed).toEqual(await mustGet(store(), "r1"));
      expect(listed).toEqual(held);
    });
  });
}
