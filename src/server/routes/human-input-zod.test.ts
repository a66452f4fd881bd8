import { z } from "zod";
import { describe, expect, it } from "vitest";
import { onCleanup, testEngine } from "../../../test/support/engines.js";
import { testServer } from "../../../test/support/server.js";
import { defineWorkflow } from "../../engine/define-workflow.js";
import { waitFor } from "../../testing/wait-for.js";

/** Checks the JSON Schema copy cannot express: a refinement, a custom check, a transform. */
const strict = defineWorkflow({
  name: "strict",
  version: "1",
  async run(ctx) {
    const code = await ctx.askHuman({ name: "code", question: "Code?", input: z.string().refine((s) => s.startsWith("ok"), "must start with ok") });
    const even = await ctx.askHuman({ name: "even", question: "Even?", input: z.custom<number>((v) => typeof v === "number" && v % 2 === 0, "must be even") });
    const length = await ctx.askHuman({ name: "length", question: "Word?", input: z.string().transform((s) => s.length) });
    const when = await ctx.askHuman({ name: "when", question: "When?", input: z.coerce.date() });
    return { code: code.value, even: even.value, length: length.value, when: (when.value as Date).toISOString() };
  },
});

async function setup() {
  const engine = await testEngine("sqlite", { workflows: [strict] });
  const worker = engine.startWorker({ pollInterval: 10 });
  onCleanup(() => worker.stop());
  const server = await testServer(engine);
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${server.url}${path}`, {
      method,
      headers: body === undefined ? {} : { "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  /** The one pending request of the run, once it is `opKey`'s. */
  const pending = (opKey: string, count = 1) =>
    waitFor(async () => {
      const { body } = await call("GET", "/human-requests?status=pending");
      const mine = body.requests.filter((r: any) => r.opKey === opKey);
      return mine.length === 1 && body.requests.length === 1 && (count === 1 || mine[0].refused) ? mine[0] : undefined;
    });
  const answer = (requestId: string, value: unknown) => call("POST", `/human-requests/${encodeURIComponent(requestId)}/answer`, { action: "answer", value });
  return { engine, call, pending, answer };
}

describe("a human request's zod input schema, checked by the worker that asked", () => {
  it('refuses "definitely-not-ok" for z.string().refine(s => s.startsWith("ok")) and asks again with the reason; z.custom too; transforms apply', async () => {
    const { engine, call, pending, answer } = await setup();
    await engine.start("strict", null, { runId: "s1" });

    const first = await pending("code#0");
    expect(first.refused).toBeNull();
    expect((await answer(first.requestId, "definitely-not-ok")).status).toBe(200);
    // The worker refused it: the run did not get it, and the same question is open again, saying why.
    const again = await pending("code#0", 2);
    expect(again.requestId).not.toBe(first.requestId);
    expect(again.question).toBe("Code?");
    expect(again.refused).toEqual({ requestId: first.requestId, message: "value: must start with ok" });
    expect((await engine.getRun("s1")).status).toBe("suspended");
    expect((await answer(again.requestId, "ok-123")).status).toBe(200);

    const even = await pending("even#0");
    await answer(even.requestId, 3);
    const evenAgain = await pending("even#0", 2);
    expect(evenAgain.refused.message).toContain("must be even");
    await answer(evenAgain.requestId, 4);

    await answer((await pending("length#0")).requestId, "seven!!");
    await answer((await pending("when#0")).requestId, "2026-01-02T03:04:05.000Z");
    await waitFor(async () => (await engine.getRun("s1")).status === "completed");
    expect((await call("GET", "/runs/s1")).body.output).toEqual({ code: "ok-123", even: 4, length: 7, when: "2026-01-02T03:04:05.000Z" });
    // The refused answers are kept in the journal, marked refused and not delivered.
    const refused = (await engine.journal("s1")).filter((e) => e.kind === "human.answered" && (e.data as any).refused);
    expect(refused.map((e) => (e.data as any).answer.value)).toEqual(["definitely-not-ok", 3]);
  });
});
