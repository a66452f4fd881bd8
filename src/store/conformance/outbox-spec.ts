import { describe, expect, it } from "vitest";
import { outboxMessageId } from "../../core/outbox.js";
import { encode } from "../../core/serialize.js";
import type { Store } from "../../core/store.js";
import { T0, commitOk, entry, startRun } from "./harness.js";

function emitted(runId: string, opKey: string, topic = "order.paid", payload: unknown = { n: 1 }) {
  return entry("outbox.emitted", opKey, { topic, payload, messageId: outboxMessageId(runId, opKey) });
}

const claim = (store: Store, owner: string, now: number, extra: { topics?: string[]; limit?: number; leaseMs?: number } = {}) =>
  store.claimOutbox({ owner, topics: extra.topics ?? ["order.paid"], now, leaseMs: extra.leaseMs ?? 1000, limit: extra.limit ?? 10 });

/** The transactional outbox: messages inserted by their entry's commit, claimed under leases, settled. */
export function outboxSpec(store: () => Store): void {
  describe("outbox", () => {
    it("inserts the message in the commit of its outbox.emitted entry, pending and due at once", async () => {
      const run = await startRun(store(), "r1");
      await commitOk(store(), run, [entry("step.started", "charge#0", { attempt: 1 }), emitted("r1", "order.paid#0")], T0 + 5);
      const [message] = await store().listOutbox({});
      expect(message).toEqual({
        id: expect.any(Number) as number,
        messageId: "r1:order.paid#0",
        runId: "r1",
        opKey: "order.paid#0",
        seq: 4,
        topic: "order.paid",
        payload: encode({ n: 1 }),
        status: "pending",
        attempts: 0,
        nextAttemptAt: T0 + 5,
        lastError: null,
        leaseOwner: null,
        createdAt: T0 + 5,
        deliveredAt: null,
      });
      expect(await store().getOutboxMessage("r1:order.paid#0")).toEqual(message);
      expect(await store().getOutboxMessage("nope")).toBeUndefined();
    });

    it("writes no message when the commit is fenced out (stale epoch) or the run is finished", async () => {
      const run = await startRun(store(), "r1");
      const [stale] = await store().commit([{ runId: "r1", epoch: run.leaseEpoch - 1, entries: [emitted("r1", "order.paid#0")] }], T0 + 1);
      expect(stale).toMatchObject({ ok: false });
      await commitOk(store(), run, [entry("run.completed", null, { output: null })], T0 + 2);
      const [finished] = await store().commit([{ runId: "r1", epoch: run.leaseEpoch, entries: [emitted("r1", "order.paid#0")] }], T0 + 3);
      expect(finished).toMatchObject({ ok: false });
      expect(await store().listOutbox({})).toEqual([]);
    });

    it("writes no message when the transaction that carries it rolls back", async () => {
      const run = await startRun(store(), "r1");
      // The second entry consumes an inbox row that does not exist: the whole commit is rolled back.
      const bad = entry("event.received", "wait#0", { type: "t", eventId: "e", payload: null, inboxId: 987654 });
      await expect(store().commit([{ runId: "r1", epoch: run.leaseEpoch, entries: [emitted("r1", "order.paid#0"), bad] }], T0 + 1)).rejects.toThrow();
      expect(await store().listOutbox({})).toEqual([]);
      expect((await store().readJournal("r1")).map((e) => e.kind)).not.toContain("outbox.emitted");
    });

    it("claims due messages of the given topics oldest first, each for one owner until its lease expires", async () => {
      const run = await startRun(store(), "r1");
      await commitOk(store(), run, [emitted("r1", "a#0"), emitted("r1", "b#0", "other"), emitted("r1", "c#0")], T0 + 1);
      expect(await claim(store(), "d1", T0 + 1, { topics: [] })).toEqual([]);
      const first = await claim(store(), "d1", T0 + 2, { limit: 1 });
      expect(first.map((m) => [m.messageId, m.attempts, m.leaseOwner, m.nextAttemptAt])).toEqual([["r1:a#0", 1, "d1", T0 + 1002]]);
      const second = await claim(store(), "d2", T0 + 3);
      expect(second.map((m) => m.messageId)).toEqual(["r1:c#0"]);
      expect(await claim(store(), "d3", T0 + 500)).toEqual([]);
      // d1's lease on a#0 expired: another dispatcher takes it over, as attempt 2.
      const taken = await claim(store(), "d3", T0 + 1002);
      expect(taken.map((m) => [m.messageId, m.attempts, m.leaseOwner])).toEqual([["r1:a#0", 2, "d3"]]);
      expect((await claim(store(), "d4", T0 + 5000, { topics: ["other"] })).map((m) => m.messageId)).toEqual(["r1:b#0"]);
    });

    it("concurrent claimers never get the same message", async () => {
      const run = await startRun(store(), "r1");
      await commitOk(
        store(),
        run,
        Array.from({ length: 20 }, (_, i) => emitted("r1", `m${i}#0`)),
        T0,
      );
      const results = await Promise.all(Array.from({ length: 5 }, (_, i) => claim(store(), `d${i}`, T0 + 1, { limit: 7 })));
      const ids = results.flat().map((m) => m.messageId);
      expect(ids.length).toBe(20);
      expect(new Set(ids).size).toBe(20);
    });

    it("settles only for the holder at its attempt: delivered, retried later, or dead", async () => {
      const run = await startRun(store(), "r1");
      await commitOk(store(), run, [emitted("r1", "a#0"), emitted("r1", "b#0")], T0);
      const [a, b] = await claim(store(), "d1", T0 + 1);
      expect(await store().settleOutbox({ messageId: a!.messageId, owner: "d2", attempts: 1, outcome: "delivered" }, T0 + 2)).toBe(false);
      expect(await store().settleOutbox({ messageId: a!.messageId, owner: "d1", attempts: 2, outcome: "delivered" }, T0 + 2)).toBe(false);
      expect(await store().settleOutbox({ messageId: a!.messageId, owner: "d1", attempts: 1, outcome: "delivered" }, T0 + 3)).toBe(true);
      expect(await store().settleOutbox({ messageId: a!.messageId, owner: "d1", attempts: 1, outcome: "delivered" }, T0 + 4)).toBe(false);
      expect(await store().getOutboxMessage(a!.messageId)).toMatchObject({ status: "delivered", deliveredAt: T0 + 3, leaseOwner: null, attempts: 1 });

      expect(
        await store().settleOutbox({ messageId: b!.messageId, owner: "d1", attempts: 1, outcome: "failed", error: "HTTP 503", retryAt: T0 + 100 }, T0 + 5),
      ).toBe(true);
      expect(await store().getOutboxMessage(b!.messageId)).toMatchObject({
        status: "pending",
        nextAttemptAt: T0 + 100,
        lastError: "HTTP 503",
        leaseOwner: null,
      });
      expect(await claim(store(), "d1", T0 + 99)).toEqual([]);
      const [again] = await claim(store(), "d1", T0 + 100);
      expect(again).toMatchObject({ messageId: b!.messageId, attempts: 2 });
      expect(await store().settleOutbox({ messageId: b!.messageId, owner: "d1", attempts: 2, outcome: "failed", error: "gone", retryAt: null }, T0 + 101)).toBe(
        true,
      );
      expect(await store().getOutboxMessage(b!.messageId)).toMatchObject({ status: "dead", lastError: "gone", attempts: 2 });
      expect(await claim(store(), "d1", T0 + 1_000_000)).toEqual([]);
    });

    it("lists by status, topic, run and after an id; re-queues only dead messages", async () => {
      const run = await startRun(store(), "r1");
      await commitOk(store(), run, [emitted("r1", "a#0"), emitted("r1", "b#0", "other"), emitted("r1", "c#0")], T0);
      const [a] = await claim(store(), "d1", T0, { limit: 1 });
      await store().settleOutbox({ messageId: a!.messageId, owner: "d1", attempts: 1, outcome: "failed", error: "boom", retryAt: null }, T0 + 1);
      const all = await store().listOutbox({});
      expect(all.map((m) => m.messageId)).toEqual(["r1:a#0", "r1:b#0", "r1:c#0"]);
      expect((await store().listOutbox({ status: ["dead"] })).map((m) => m.messageId)).toEqual(["r1:a#0"]);
      expect((await store().listOutbox({ status: ["pending"] })).map((m) => m.messageId)).toEqual(["r1:b#0", "r1:c#0"]);
      expect(await store().listOutbox({ status: [] })).toEqual([]);
      expect((await store().listOutbox({ topic: "other" })).map((m) => m.messageId)).toEqual(["r1:b#0"]);
      expect(await store().listOutbox({ runId: "r2" })).toEqual([]);
      expect((await store().listOutbox({ afterId: all[0]!.id, limit: 1 })).map((m) => m.messageId)).toEqual(["r1:b#0"]);

      expect(await store().retryOutbox("r1:c#0", T0 + 2)).toMatchObject({ applied: false, message: { status: "pending" } });
      const retried = await store().retryOutbox("r1:a#0", T0 + 3);
      expect(retried).toMatchObject({ applied: true, message: { status: "pending", attempts: 0, nextAttemptAt: T0 + 3, lastError: "boom" } });
      expect((await claim(store(), "d1", T0 + 3)).map((m) => m.messageId)).toEqual(["r1:a#0", "r1:c#0"]);
      await expect(store().retryOutbox("nope", T0)).rejects.toMatchObject({ code: "OUTBOX_MESSAGE_NOT_FOUND", messageId: "nope" });
    });
  });
}
