import { describe, expect, it } from "vitest";
import { onCleanup, testEngine } from "../../../test/support/engines.js";
import { TEST_WORKFLOWS } from "../../../test/support/server.js";
import { waitFor } from "../../testing/wait-for.js";
import { createServer } from "../create-server.js";

describe("human requests", () => {
  it("lists a pending request, refuses an answer outside its options (422), takes one (200), and a second is a no-op returning the first (200)", async () => {
    const engine = await testEngine("sqlite", { workflows: TEST_WORKFLOWS });
    const worker = engine.startWorker({ pollInterval: 10 });
    onCleanup(() => worker.stop());
    const app = createServer(engine);
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await app.request(path, {
        method,
        ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { "content-type": "application/json" } }),
      });
      return { status: res.status, body: (await res.json()) as any };
    };
    await engine.start("ask", null, { runId: "loop/1" });
    const pending = await waitFor(async () => {
      const { body } = await call("GET", "/human-requests?status=pending&runId=loop/1");
      return body.requests[0];
    });
    expect(pending).toMatchObject({
      requestId: "loop/1:review#0",
      runId: "loop/1",
      question: "Ship it?",
      options: ["approve", "reject"],
      status: "pending",
      answer: null,
    });
    const path = `/human-requests/${encodeURIComponent(pending.requestId)}/answer`;

    const wrong = await call("POST", path, { action: "answer", option: "maybe" });
    expect(wrong.status).toBe(422);
    expect(wrong.body.error.code).toBe("INVALID_INPUT");
    expect(wrong.body.error.message).toContain("approve, reject");

    // A body without its action says which field is missing and shows one that works.
    const noAction = await call("POST", path, { option: "approve" });
    expect(noAction.status).toBe(400);
    expect(noAction.body.error.message).toContain('action: missing: "answer" (with an option, e.g. {"action":"answer","option":"approve"})');

    const answered = await call("POST", path, { action: "answer", option: "approve", by: "ana" });
    expect(answered.status).toBe(200);
    expect(answered.body.request).toMatchObject({ status: "answered", answer: { action: "answer", option: "approve", by: "ana" } });
    expect(answered.body.request.answeredAt).toMatch(/T/);

    expect(answered.body.duplicate).toBe(false);
    const twice = await call("POST", path, { action: "answer", option: "reject", by: "bo" });
    expect(twice.status).toBe(200);
    expect(twice.body.duplicate).toBe(true);
    expect(twice.body.request.answer).toMatchObject({ option: "approve", by: "ana" });
    await waitFor(async () => (await engine.getRun("loop/1")).status === "completed");
    expect((await engine.getRun("loop/1")).output).toBe("approve");
    expect((await call("GET", "/human-requests?status=answered")).body.requests).toHaveLength(1);

    const unknown = await call("POST", "/human-requests/nobody%3Aask%230/answer", { action: "answer", option: "x" });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe("HUMAN_REQUEST_NOT_FOUND");
  });

  it("cancelling a run closes its pending request: not listed as pending, listed as closed, and an answer is 409 HUMAN_REQUEST_CLOSED", async () => {
    const engine = await testEngine("sqlite", { workflows: TEST_WORKFLOWS });
    const worker = engine.startWorker({ pollInterval: 10 });
    onCleanup(() => worker.stop());
    const app = createServer(engine);
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await app.request(path, {
        method,
        ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { "content-type": "application/json" } }),
      });
      return { status: res.status, body: (await res.json()) as any };
    };
    await engine.start("ask", null, { runId: "gone" });
    await waitFor(async () => (await call("GET", "/human-requests?status=pending")).body.requests.length === 1);
    expect((await call("POST", "/runs/gone/cancel", { reason: "not needed" })).status).toBe(200);
    await waitFor(async () => (await engine.getRun("gone")).status === "cancelled");
    expect((await call("GET", "/human-requests?status=pending")).body.requests).toEqual([]);
    const closed = (await call("GET", "/human-requests?status=closed")).body.requests;
    expect(closed).toMatchObject([{ requestId: "gone:review#0", status: "closed", closedReason: "cancelled", answer: null }]);
    expect(closed[0].answeredAt).toMatch(/T/);
    const answer = await call("POST", "/human-requests/gone%3Areview%230/answer", { action: "answer", option: "approve" });
    expect([answer.status, answer.body.error.code]).toEqual([409, "HUMAN_REQUEST_CLOSED"]);
    expect(answer.body.error.message).toContain("cancelled");
  });

  it("pages: pending oldest first, answered newest first, with a cursor", async () => {
    const engine = await testEngine("sqlite", { workflows: TEST_WORKFLOWS });
    const worker = engine.startWorker({ pollInterval: 10 });
    onCleanup(() => worker.stop());
    const app = createServer(engine);
    const get = async (path: string) => (await (await app.request(path)).json()) as any;
    for (let i = 0; i < 4; i++) {
      await engine.start("ask", null, { runId: `p${i}` });
      await waitFor(async () => (await engine.listHumanRequests({ runId: `p${i}` })).length === 1);
    }
    const page1 = await get("/human-requests?status=pending&limit=3");
    expect(page1.requests.map((r: any) => r.runId)).toEqual(["p0", "p1", "p2"]);
    const page2 = await get(`/human-requests?status=pending&limit=3&cursor=${page1.nextCursor}`);
    expect([page2.requests.map((r: any) => r.runId), page2.nextCursor]).toEqual([["p3"], undefined]);
    for (const runId of ["p0", "p1", "p2"]) await engine.respondToHuman(`${runId}:review#0`, { action: "answer", option: "approve" });
    expect((await get("/human-requests?status=answered&limit=2")).requests.map((r: any) => r.runId)).toEqual(["p2", "p1"]);
    expect((await get("/human-requests?status=answered&order=asc&limit=2")).requests.map((r: any) => r.runId)).toEqual(["p0", "p1"]);
    const bad = await app.request("/human-requests?cursor=bm9wZQ");
    expect(bad.status).toBe(422);
  });
});
