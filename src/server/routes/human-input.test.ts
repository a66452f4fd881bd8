import { z } from "zod";
import { describe, expect, it } from "vitest";
import { onCleanup, testEngine } from "../../../test/support/engines.js";
import { ask } from "../../../test/support/server.js";
import { defineWorkflow } from "../../engine/define-workflow.js";
import { waitFor } from "../../testing/wait-for.js";
import { createServer } from "../create-server.js";

const refund = defineWorkflow({
  name: "refund",
  version: "1",
  async run(ctx) {
    const reply = await ctx.askHuman({
      name: "amount",
      question: "How much do we refund?",
      input: z.object({ amount: z.number().int().positive(), reason: z.string().min(3), rush: z.boolean() }),
    });
    return reply.value;
  },
});

describe("a human request's input schema in the API", () => {
  it("lists it as JSON Schema (null without one), refuses a value that does not match (422), and takes one that does", async () => {
    const engine = await testEngine("sqlite", { workflows: [refund, ask] });
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
    await engine.start("refund", null, { runId: "r1" });
    await engine.start("ask", null, { runId: "a1" });
    const pending = await waitFor(async () => {
      const { body } = await call("GET", "/human-requests?status=pending");
      return body.requests.length === 2 ? body.requests : undefined;
    });
    const byRun = Object.fromEntries(pending.map((r: any) => [r.runId, r]));
    expect(byRun.a1.input).toBeNull();
    expect(byRun.r1.options).toEqual([]);
    expect(byRun.r1.input).toMatchObject({
      type: "object",
      properties: { amount: { type: "integer", exclusiveMinimum: 0 }, reason: { type: "string", minLength: 3 }, rush: { type: "boolean" } },
      required: ["amount", "reason", "rush"],
    });

    const path = `/human-requests/${encodeURIComponent(byRun.r1.requestId)}/answer`;
    const wrong = await call("POST", path, { action: "answer", value: { amount: -5, reason: "ok", rush: true } });
    expect(wrong.status).toBe(422);
    expect(wrong.body.error.code).toBe("INVALID_INPUT");
    expect(wrong.body.error.message).toMatch(/amount/);
    expect(wrong.body.error.message).toMatch(/reason/);

    const answered = await call("POST", path, { action: "answer", value: { amount: 12, reason: "late delivery", rush: false } });
    expect(answered.status).toBe(200);
    expect(answered.body.request.input).toEqual(byRun.r1.input);
    await waitFor(async () => (await engine.getRun("r1")).status === "completed");
    expect((await engine.getRun("r1")).output).toEqual({ amount: 12, reason: "late delivery", rush: false });
    const done = (await call("GET", "/human-requests?status=answered&runId=r1")).body.requests;
    expect(done[0].input).toEqual(byRun.r1.input);
  });
});
