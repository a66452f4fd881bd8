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
      const res = await app.request(path, { method, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
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
});
