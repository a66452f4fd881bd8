import { describe, expect, it } from "vitest";
import type { HumanAnswer } from "../../core/journal.js";
import { encode } from "../../core/serialize.js";
import type { HumanRequest, InboxEvent, Store } from "../../core/store.js";
import { T0, commitOk, entry, mustGet, reclaim, seqs, startRun, suspend } from "./harness.js";

function received(event: InboxEvent, opKey = "wait#0") {
  return entry("event.received", opKey, { type: event.type, eventId: event.eventId, payload: null, inboxId: event.id });
}

/** The inbox (sendEvent, pendingEvents, consumption) and human requests. */
export function inboxSpec(store: () => Store): void {
  describe("sendEvent and the inbox", () => {
    it("buffers an event, unconsumed, in the run's inbox", async () => {
      await startRun(store(), "r1");
      expect(await store().sendEvent({ runId: "r1", type: "review", eventId: "e1", payload: encode({ ok: true }) }, T0 + 5)).toEqual({ duplicate: false });
      const inbox = await store().listInbox("r1");
      expect(inbox).toEqual([
        { id: expect.any(Number) as number, runId: "r1", type: "review", eventId: "e1", payload: encode({ ok: true }), consumedSeq: null, receivedAt: T0 + 5 },
      ]);
      expect(await store().pendingEvents("r1", "review")).toEqual(inbox);
      expect(await store().pendingEvents("r1", "other")).toEqual([]);
      expect(await store().listInbox("nope")).toEqual([]);
    });

    it("throws RunNotFoundError for an unknown run and RunFinishedError for a finished one", async () => {
      await expect(store().sendEvent({ runId: "ghost", type: "t", eventId: "e", payload: "" }, T0)).rejects.toMatchObject({ code: "RUN_NOT_FOUND" });
      const run = await startRun(store(), "r1");
      await commitOk(store(), run, [entry("run.completed", null, { output: 1 })], T0 + 1);
      const error = await store()
        .sendEvent({ runId: "r1", type: "review", eventId: "e", payload: "" }, T0 + 2)
        .catch((e: unknown) => e);
      expect(error).toMatchObject({ code: "RUN_FINISHED", runId: "r1", status: "completed" });
      expect((error as Error).message).toContain('send event "review"');
      expect(await store().listInbox("r1")).toEqual([]);
    });

    it("treats a repeated eventId as a no-op, even after the run finished", async () => {
      const run = await startRun(store(), "r1");
      await suspend(store(), run, null, T0 + 1);
      await store().sendEvent({ runId: "r1", type: "t", eventId: "e1", payload: encode("first") }, T0 + 10);
      const [held] = await reclaim(store(), "r1", T0 + 20);
      const before = await mustGet(store(), "r1");
      expect(await store().sendEvent({ runId: "r1", type: "t2", eventId: "e1", payload: encode("second") }, T0 + 30)).toEqual({ duplicate: true });
      expect(await mustGet(store(), "r1")).toEqual(before);
      expect((await store().listInbox("r1")).map((e) => e.payload)).toEqual([encode("first")]);
      await commitOk(store(), held ?? before, [entry("run.completed", null, { output: 1 })], T0 + 40);
      expect(await store().sendEvent({ runId: "r1", type: "t", eventId: "e1", payload: "" }, T0 + 50)).toEqual({ duplicate: true });
    });

    it("scopes eventIds to their run", async () => {
      await startRun(store(), "a");
      await startRun(store(), "b");
      expect(await store().sendEvent({ runId: "a", type: "t", eventId: "same", payload: "" }, T0)).toEqual({ duplicate: false });
      expect(await store().sendEvent({ runId: "b", type: "t", eventId: "same", payload: "" }, T0)).toEqual({ duplicate: false });
    });

    it("lists pending events oldest first, limited", async () => {
      await startRun(store(), "r1");
      for (const id of ["e1", "e2", "e3"]) await store().sendEvent({ runId: "r1", type: "t", eventId: id, payload: encode(id) }, T0);
      await store().sendEvent({ runId: "r1", type: "u", eventId: "u1", payload: "" }, T0);
      expect((await store().pendingEvents("r1", "t")).map((e) => e.eventId)).toEqual(["e1", "e2", "e3"]);
      expect((await store().pendingEvents("r1", "t", 2)).map((e) => e.eventId)).toEqual(["e1", "e2"]);
      const ids = (await store().listInbox("r1")).map((e) => e.id);
      expect([...ids].sort((x, y) => x - y)).toEqual(ids);
    });

    it("event.received consumes the inbox row at the entry's seq", async () => {
      const run = await startRun(store(), "r1");
      await store().sendEvent({ runId: "r1", type: "t", eventId: "e1", payload: "" }, T0);
      await store().sendEvent({ runId: "r1", type: "t", eventId: "e2", payload: "" }, T0);
      const [first] = await store().pendingEvents("r1", "t");
      const [result] = await store().commit(
        [{ runId: "r1", epoch: run.leaseEpoch, entries: [entry("event.waiting", "wait#0", { type: "t", timeoutAt: null }), received(first as InboxEvent)] }],
        T0 + 1,
      );
      expect(result).toEqual({ ok: true, firstSeq: 3, lastSeq: 4 });
      expect((await store().pendingEvents("r1", "t")).map((e) => e.eventId)).toEqual(["e2"]);
      expect((await store().listInbox("r1")).map((e) => [e.eventId, e.consumedSeq])).toEqual([
        ["e1", 4],
        ["e2", null],
      ]);
    });

    it("refuses to consume an event twice or another run's event, rolling the commit back", async () => {
      const a = await startRun(store(), "a");
      await startRun(store(), "b");
      await store().sendEvent({ runId: "a", type: "t", eventId: "e1", payload: "" }, T0);
      await store().sendEvent({ runId: "b", type: "t", eventId: "e1", payload: "" }, T0);
      const [ofA] = await store().listInbox("a");
      const [ofB] = await store().listInbox("b");
      await expect(store().commit([{ runId: "a", epoch: a.leaseEpoch, entries: [received(ofB as InboxEvent)] }], T0 + 1)).rejects.toThrow(/belongs to run "b"/);
      await commitOk(store(), a, [received(ofA as InboxEvent)], T0 + 2);
      await expect(store().commit([{ runId: "a", epoch: a.leaseEpoch, entries: [received(ofA as InboxEvent, "wait#1")] }], T0 + 3)).rejects.toThrow(
        /already consumed/,
      );
      expect(await seqs(store(), "a")).toEqual([1, 2, 3]);
      expect((await store().listInbox("b"))[0]?.consumedSeq).toBeNull();
    });
  });

  describe("human requests", () => {
    const question = { requestId: "rq1", question: "Ship it?", options: ["yes", "no"], timeoutAt: T0 + 9999 };
    const answer: HumanAnswer = { action: "answer", value: "yes", by: "ana" };

    async function asked(runId = "r1"): Promise<void> {
      const run = await startRun(store(), runId);
      await commitOk(store(), run, [entry("human.requested", "approve#0", question)], T0 + 1);
      await suspend(store(), run, null, T0 + 2);
    }

    it("human.requested creates a pending request; a repeat does not overwrite it", async () => {
      const run = await startRun(store(), "r1");
      await commitOk(store(), run, [entry("human.requested", "approve#0", question)], T0 + 1);
      const expected: HumanRequest = { ...question, runId: "r1", opKey: "approve#0", status: "pending", answer: null, createdAt: T0 + 1, answeredAt: null };
      expect(await store().getHumanRequest("rq1")).toEqual(expected);
      await commitOk(store(), run, [entry("human.requested", "approve#1", { ...question, question: "Changed?" })], T0 + 2);
      expect(await store().getHumanRequest("rq1")).toEqual(expected);
      expect(await store().getHumanRequest("nope")).toBeUndefined();
    });

    it("keeps the context a request was asked with, encoded", async () => {
      const run = await startRun(store(), "r1");
      await commitOk(store(), run, [entry("human.requested", "approve#0", { ...question, context: { diff: "+1 -1", at: new Date(T0) } })], T0 + 1);
      const request = await store().getHumanRequest("rq1");
      expect(request?.context).toBe(encode({ diff: "+1 -1", at: new Date(T0) }));
      expect((await store().listHumanRequests({ runId: "r1" }))[0]?.context).toBe(request?.context);
    });

    it("lists requests by status and run, oldest first", async () => {
      const a = await startRun(store(), "a");
      const b = await startRun(store(), "b");
      await commitOk(store(), b, [entry("human.requested", "q#0", { ...question, requestId: "b1" })], T0 + 1);
      await commitOk(store(), a, [entry("human.requested", "q#0", { ...question, requestId: "a1" })], T0 + 2);
      await commitOk(store(), a, [entry("human.requested", "q#1", { ...question, requestId: "a2" })], T0 + 3);
      await store().answerHuman("a1", answer, T0 + 4);
      const ids = async (query: Parameters<Store["listHumanRequests"]>[0]) => (await store().listHumanRequests(query)).map((r) => r.requestId);
      expect(await ids({})).toEqual(["b1", "a1", "a2"]);
      expect(await ids({ status: "pending" })).toEqual(["b1", "a2"]);
      expect(await ids({ status: "answered" })).toEqual(["a1"]);
      expect(await ids({ runId: "a" })).toEqual(["a1", "a2"]);
      expect(await ids({ runId: "a", status: "pending", limit: 5 })).toEqual(["a2"]);
      expect(await ids({ limit: 1 })).toEqual(["b1"]);
    });

    it("lists by run id prefix in the query (a page is never short), newest first on request, and after a keyset cursor", async () => {
      const runs = await Promise.all(["ns/a", "ns0", "other", "ns/b"].map((runId) => startRun(store(), runId)));
      let at = T0;
      // Interleaved: 3 requests per run, in creation order; "ns0" sorts right after "ns/" and must not match.
      for (let k = 0; k < 3; k++) {
        for (const run of runs)
          await commitOk(store(), run, [entry("human.requested", `q#${k}`, { ...question, requestId: `${run.runId}:q#${k}` })], (at += 1));
      }
      const ids = async (query: Parameters<Store["listHumanRequests"]>[0]) => (await store().listHumanRequests(query)).map((r) => r.requestId);
      const ours = ["ns/a:q#0", "ns/b:q#0", "ns/a:q#1", "ns/b:q#1", "ns/a:q#2", "ns/b:q#2"];
      expect(await ids({ runIdPrefix: "ns/" })).toEqual(ours);
      expect(await ids({ runIdPrefix: "ns/", limit: 2 })).toEqual(ours.slice(0, 2));
      expect(await ids({ runIdPrefix: "ns/", order: "desc", limit: 4 })).toEqual([...ours].reverse().slice(0, 4));
      const first = (await store().listHumanRequests({ runIdPrefix: "ns/", limit: 4 })).at(-1)!;
      expect(await ids({ runIdPrefix: "ns/", limit: 4, after: { createdAt: first.createdAt, requestId: first.requestId } })).toEqual(ours.slice(4));
      const newest = (await store().listHumanRequests({ runIdPrefix: "ns/", order: "desc", limit: 2 })).at(-1)!;
      expect(await ids({ runIdPrefix: "ns/", order: "desc", after: { createdAt: newest.createdAt, requestId: newest.requestId } })).toEqual(
        [...ours].reverse().slice(2),
      );
      // Same creation time: ties are broken by request id, in both directions.
      const tie = await startRun(store(), "tie");
      await commitOk(
        store(),
        tie,
        [entry("human.requested", "q#0", { ...question, requestId: "tie:b" }), entry("human.requested", "q#1", { ...question, requestId: "tie:a" })],
        at + 1,
      );
      expect(await ids({ runId: "tie" })).toEqual(["tie:a", "tie:b"]);
      expect(await ids({ runId: "tie", order: "desc" })).toEqual(["tie:b", "tie:a"]);
      expect(await ids({ runId: "tie", after: { createdAt: at + 1, requestId: "tie:a" } })).toEqual(["tie:b"]);
      expect(await ids({ runIdPrefix: "%" })).toEqual([]);
    });

    it("answerHuman records the answer, delivers it to the inbox and wakes the run", async () => {
      await asked();
      await store().answerHuman("rq1", answer, T0 + 50);
      expect(await store().getHumanRequest("rq1")).toMatchObject({ status: "answered", answer: encode(answer), answeredAt: T0 + 50 });
      expect(await store().pendingEvents("r1", "human:rq1")).toMatchObject([
        { runId: "r1", type: "human:rq1", eventId: "rq1", payload: encode(answer), consumedSeq: null, receivedAt: T0 + 50 },
      ]);
      expect(await mustGet(store(), "r1")).toMatchObject({ status: "suspended", wakeAt: T0 + 50 });
    });

    it("answerHuman refuses unknown and already answered requests", async () => {
      await asked();
      await expect(store().answerHuman("nope", answer, T0 + 5)).rejects.toMatchObject({ code: "HUMAN_REQUEST_NOT_FOUND", requestId: "nope" });
      await store().answerHuman("rq1", answer, T0 + 5);
      await expect(store().answerHuman("rq1", { action: "answer", value: "no" }, T0 + 6)).rejects.toMatchObject({ code: "HUMAN_REQUEST_ANSWERED" });
      expect(await store().listInbox("r1")).toHaveLength(1);
      expect((await store().getHumanRequest("rq1"))?.answer).toBe(encode(answer));
    });

    it("answerHuman refuses a request whose answer is already in the inbox", async () => {
      await asked();
      await store().sendEvent({ runId: "r1", type: "human:rq1", eventId: "rq1", payload: encode(answer) }, T0 + 5);
      await expect(store().answerHuman("rq1", answer, T0 + 6)).rejects.toMatchObject({ code: "HUMAN_REQUEST_ANSWERED" });
    });

    it("a run's final entry closes its pending requests in the same commit; answering one is HUMAN_REQUEST_CLOSED", async () => {
      await asked();
      await store().controlRun("r1", ["suspended"], entry("run.cancelled", null, {}), T0 + 5);
      expect(await store().getHumanRequest("rq1")).toMatchObject({ status: "closed", closedReason: "cancelled", answer: null, answeredAt: T0 + 5 });
      await expect(store().answerHuman("rq1", answer, T0 + 6)).rejects.toMatchObject({ code: "HUMAN_REQUEST_CLOSED", runStatus: "cancelled" });
      expect(await store().getHumanRequest("rq1")).toMatchObject({ status: "closed", answer: null });
      expect(await store().listInbox("r1")).toEqual([]);
      expect((await store().listHumanRequests({ status: "pending" })).map((r) => r.requestId)).toEqual([]);
      expect((await store().listHumanRequests({ status: "closed" })).map((r) => r.requestId)).toEqual(["rq1"]);
    });

    it("closes only the finished run's pending requests (answered ones and other runs' stay), on completion and failure; a retry reopens them", async () => {
      const a = await startRun(store(), "a");
      const b = await startRun(store(), "b");
      await commitOk(store(), a, [entry("human.requested", "q#0", { ...question, requestId: "a1" })], T0 + 1);
      await commitOk(store(), a, [entry("human.requested", "q#1", { ...question, requestId: "a2" })], T0 + 2);
      await commitOk(store(), b, [entry("human.requested", "q#0", { ...question, requestId: "b1" })], T0 + 3);
      await store().answerHuman("a1", answer, T0 + 4);
      await commitOk(store(), a, [entry("run.failed", null, { error: { name: "Error", message: "boom" } })], T0 + 6);
      expect(await store().getHumanRequest("a1")).toMatchObject({ status: "answered", answer: encode(answer) });
      expect(await store().getHumanRequest("a2")).toMatchObject({ status: "closed", closedReason: "failed", answeredAt: T0 + 6 });
      expect(await store().getHumanRequest("b1")).toMatchObject({ status: "pending" });
      // A retried run waits on its questions again.
      await store().controlRun("a", ["failed"], entry("run.retried", null, { failedSteps: [] }), T0 + 7);
      const reopened = await store().getHumanRequest("a2");
      expect(reopened).toMatchObject({ status: "pending", answeredAt: null });
      expect(reopened?.closedReason).toBeUndefined();
      await commitOk(store(), b, [entry("run.completed", null, { output: 1 })], T0 + 8);
      expect(await store().getHumanRequest("b1")).toMatchObject({ status: "closed", closedReason: "completed" });
    });

    it("human.answered consumes the answer and keeps the first recorded answer", async () => {
      await asked();
      await store().answerHuman("rq1", answer, T0 + 5);
      const [held] = await reclaim(store(), "r1", T0 + 6);
      const [event] = await store().pendingEvents("r1", "human:rq1");
      await commitOk(
        store(),
        held ?? { runId: "r1", leaseEpoch: 2 },
        [entry("human.answered", "approve#0", { requestId: "rq1", answer, inboxId: event?.id ?? -1 })],
        T0 + 7,
      );
      expect(await store().pendingEvents("r1", "human:rq1")).toEqual([]);
      expect((await store().listInbox("r1"))[0]?.consumedSeq).toBe(6);
      expect(await store().getHumanRequest("rq1")).toMatchObject({ status: "answered", answer: encode(answer), answeredAt: T0 + 5 });
    });

    it("human.answered marks a request answered when the answer came in as a plain event", async () => {
      await asked();
      const late: HumanAnswer = { action: "skip", value: 3 };
      await store().sendEvent({ runId: "r1", type: "human:rq1", eventId: "rq1", payload: encode(late) }, T0 + 5);
      const [held] = await reclaim(store(), "r1", T0 + 6);
      const [event] = await store().pendingEvents("r1", "human:rq1");
      await commitOk(
        store(),
        held ?? { runId: "r1", leaseEpoch: 2 },
        [entry("human.answered", "approve#0", { requestId: "rq1", answer: late, inboxId: event?.id ?? -1 })],
        T0 + 7,
      );
      expect(await store().getHumanRequest("rq1")).toMatchObject({ status: "answered", answer: encode(late), answeredAt: T0 + 7 });
    });
  });
}
