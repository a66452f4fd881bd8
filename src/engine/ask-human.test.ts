import { describe, expect, it } from "vitest";
import { z } from "zod";
import { sharedEngines, STORE_KINDS, testEngine } from "../../test/support/engines.js";
import { isCairnError } from "../core/errors.js";
import { waitFor } from "../testing/wait-for.js";
import { defineWorkflow } from "./define-workflow.js";
import type { Engine } from "./engine.js";

const fast = { pollInterval: 10 };

async function pending(engine: Engine, runId: string) {
  return (await engine.listHumanRequests({ status: "pending", runId })).map((r) => r.requestId);
}

describe.each(STORE_KINDS)("ctx.askHuman on %s", (kind) => {
  it("suspends until a valid answer, then returns who chose what", async () => {
    let asked = 0;
    const wf = defineWorkflow({
      name: "ask",
      async run(ctx) {
        asked += 1;
        const reply = await ctx.askHuman<{ note: string }>({
          question: "Deploy to production?",
          options: ["approve", "reject"],
          context: { diff: "+1 -1" },
        });
        return { option: reply.option, value: reply.value, by: reply.by, timedOut: reply.timedOut };
      },
    });
    const engine = await testEngine(kind, { workflows: [wf] });
    engine.startWorker(fast);
    await engine.start(wf, undefined, { runId: "r" });
    await waitFor(async () => (await pending(engine, "r")).length === 1, { what: "the request is pending" });
    expect(await pending(engine, "r")).toEqual(["r:ask#0"]);
    await waitFor(async () => (await engine.getRun("r")).status === "suspended", { what: "the run suspends while it waits" });
    // The context is on the request itself too, for the inbox.
    const [listed] = await engine.listHumanRequests({ runId: "r" });
    expect(listed!.context && JSON.parse(listed!.context)).toEqual({ diff: "+1 -1" });
    const requested = (await engine.journal("r")).find((e) => e.kind === "human.requested");
    expect(requested?.data).toMatchObject({ question: "Deploy to production?", options: ["approve", "reject"], context: { diff: "+1 -1" } });

    const bad = await engine.respondToHuman("r:ask#0", { action: "answer", option: "maybe" }).catch((e: unknown) => e);
    expect(isCairnError(bad, "INVALID_INPUT")).toBe(true);
    expect((bad as Error).message).toContain("approve, reject");
    const wrongKind = await engine.respondToHuman("r:ask#0", { action: "retry" }).catch((e: unknown) => e);
    expect((wrongKind as Error).message).toContain('action "answer"');

    await engine.respondToHuman("r:ask#0", { action: "answer", option: "approve", value: { note: "ship it" }, by: "ada" });
    expect(await engine.result("r", { timeoutMs: 5000 })).toEqual({ option: "approve", value: { note: "ship it" }, by: "ada", timedOut: false });
    // Answering twice is a no-op that returns the first answer.
    const again = await engine.respondToHuman("r:ask#0", { action: "answer", option: "reject", by: "bob" });
    expect(again).toEqual({ duplicate: true, answer: { action: "answer", option: "approve", value: { note: "ship it" }, by: "ada" } });
    expect(await pending(engine, "r")).toEqual([]);
    // Asked once live, then once more when it resumed after the answer: the request was not re-sent.
    expect((await engine.journal("r")).filter((e) => e.kind === "human.requested")).toHaveLength(1);
    expect(asked).toBe(2);
  });

  it("keeps several requests pending at once and takes their answers in any order", async () => {
    const wf = defineWorkflow({
      name: "many",
      async run(ctx) {
        const replies = await Promise.all(
          ["a", "b", "c"].map((name) => ctx.askHuman({ name: `approve-${name}`, question: `Run tool ${name}?`, options: ["approve", "reject"] })),
        );
        return replies.map((r) => r.option);
      },
    });
    const [one, two] = await sharedEngines(kind, [wf], [wf]);
    const worker = one!.startWorker(fast);
    await one!.start(wf, undefined, { runId: "m" });
    await waitFor(async () => (await pending(one!, "m")).length === 3, { what: "three pending requests" });
    await one!.respondToHuman("m:approve-c#0", { action: "answer", option: "reject" });
    await one!.respondToHuman("m:approve-a#0", { action: "answer", option: "approve" });
    await waitFor(async () => (await pending(one!, "m")).length === 1);
    // A restart in the middle: the answered ones replay, the third is still asked once.
    await worker.stop();
    two!.startWorker(fast);
    await two!.respondToHuman("m:approve-b#0", { action: "answer", option: "approve" });
    expect(await two!.result("m", { timeoutMs: 5000 })).toEqual(["approve", "approve", "reject"]);
    expect((await two!.journal("m")).filter((e) => e.kind === "human.requested")).toHaveLength(3);
  });

  it("escalates on timeout: chooses the declared option, or fails with TimeoutError", async () => {
    const wf = defineWorkflow({
      name: "late",
      async run(ctx) {
        const chosen = await ctx.askHuman({ name: "soft", question: "Proceed?", options: ["yes", "no"], timeout: "50ms", onTimeout: { option: "no" } });
        let failed = "";
        try {
          await ctx.askHuman({ name: "hard", question: "Really?", timeout: "50ms" });
        } catch (error) {
          failed = isCairnError(error, "TIMEOUT") ? "timeout" : String(error);
        }
        return { option: chosen.option, by: chosen.by, timedOut: chosen.timedOut, failed };
      },
    });
    const engine = await testEngine(kind, { workflows: [wf] });
    engine.startWorker(fast);
    await engine.start(wf, undefined, { runId: "t" });
    expect(await engine.result("t", { timeoutMs: 5000 })).toEqual({ option: "no", by: "timeout", timedOut: true, failed: "timeout" });
    expect(await pending(engine, "t")).toEqual([]);
    const kinds = (await engine.journal("t")).filter((e) => e.kind.startsWith("human.")).map((e) => `${e.kind} ${e.opKey}`);
    expect(kinds).toEqual(["human.requested soft#0", "human.timedout soft#0", "human.requested hard#0", "human.timedout hard#0"]);
  });

  it("accepts only answers whose value matches the request's input schema", async () => {
    const wf = defineWorkflow({
      name: "typed",
      async run(ctx) {
        const reply = await ctx.askHuman<{ amount: number }>({
          question: "How much to refund?",
          input: z.object({ amount: z.number().int().positive() }),
        });
        return reply.value;
      },
    });
    const engine = await testEngine(kind, { workflows: [wf] });
    engine.startWorker(fast);
    await engine.start(wf, undefined, { runId: "typed" });
    await waitFor(async () => (await pending(engine, "typed")).length === 1);
    const requested = (await engine.journal("typed")).find((e) => e.kind === "human.requested")!.data as { input: { type: string } };
    expect(requested.input.type).toBe("object");
    const bad = await engine.respondToHuman("typed:ask#0", { action: "answer", value: { amount: -5 } }).catch((e: unknown) => e);
    expect(isCairnError(bad, "INVALID_INPUT")).toBe(true);
    expect((bad as Error).message).toContain("amount");
    expect(await pending(engine, "typed")).toEqual(["typed:ask#0"]);
    await engine.respondToHuman("typed:ask#0", { action: "answer", value: { amount: 12 } });
    expect(await engine.result("typed", { timeoutMs: 5000 })).toEqual({ amount: 12 });
  });

  it("extends an unanswered request's deadline before escalating, and can cancel the run", async () => {
    const wf = defineWorkflow({
      name: "patient",
      async run(ctx, input: { mode: string }) {
        if (input.mode === "extend") {
          const reply = await ctx.askHuman({
            question: "Still there?",
            options: ["yes", "no"],
            timeout: "40ms",
            onTimeout: { extend: "40ms", times: 2, then: { option: "no" } },
          });
          return reply.option;
        }
        await ctx.askHuman({ question: "Proceed?", timeout: "40ms", onTimeout: "cancel" });
        return "unreachable";
      },
    });
    const engine = await testEngine(kind, { workflows: [wf] });
    engine.startWorker(fast);
    await engine.start(wf, { mode: "extend" }, { runId: "ext" });
    expect(await engine.result("ext", { timeoutMs: 5000 })).toBe("no");
    const kinds = (await engine.journal("ext")).filter((e) => e.kind.startsWith("human.")).map((e) => e.kind);
    expect(kinds).toEqual(["human.requested", "human.extended", "human.extended", "human.timedout"]);
    const [request] = await engine.listHumanRequests({ runId: "ext" });
    const extensions = (await engine.journal("ext")).filter((e) => e.kind === "human.extended").map((e) => (e.data as { timeoutAt: number }).timeoutAt);
    expect(request!.timeoutAt).toBe(extensions[1]);

    await engine.start(wf, { mode: "cancel" }, { runId: "cxl" });
    await waitFor(async () => (await engine.getRun("cxl")).status === "cancelled", { what: "the run cancels itself" });
    expect((await engine.getRun("cxl")).error?.message).toContain("in time");
    expect(await pending(engine, "cxl")).toEqual([]);
  });

  it("notify needs a timeout and a valid topic", async () => {
    const wf = defineWorkflow({
      name: "mute",
      async run(ctx, input: { mode: string }) {
        if (input.mode === "no-timeout") return ctx.askHuman({ question: "Ok?", notify: true });
        return ctx.askHuman({ question: "Ok?", timeout: "1h", notify: { topic: "no spaces" } });
      },
    });
    const engine = await testEngine(kind, { workflows: [wf] });
    engine.startWorker(fast);
    for (const mode of ["no-timeout", "topic"]) {
      await engine.start(wf, { mode }, { runId: mode });
      await waitFor(async () => (await engine.getRun(mode)).status === "failed");
      expect((await engine.journal(mode)).some((e) => e.kind === "human.requested")).toBe(false);
    }
    expect((await engine.getRun("no-timeout")).error?.message).toContain("notify needs a timeout");
    expect((await engine.getRun("topic")).error?.message).toContain("notify.topic");
  });

  it("requireNote: an answer choosing an option that needs a note is refused without one; a bad list fails the request", async () => {
    const wf = defineWorkflow({
      name: "noted",
      async run(ctx, input: { mode: string }) {
        if (input.mode === "bad") return ctx.askHuman({ question: "Ok?", options: ["yes"], requireNote: ["no"] });
        const reply = await ctx.askHuman({ question: "Ship?", options: ["approve", "reject"], requireNote: ["reject"] });
        return { option: reply.option, message: reply.message };
      },
    });
    const engine = await testEngine(kind, { workflows: [wf] });
    engine.startWorker(fast);
    await engine.start(wf, { mode: "bad" }, { runId: "bad" });
    await waitFor(async () => (await engine.getRun("bad")).status === "failed");
    expect((await engine.getRun("bad")).error?.message).toContain("requireNote");
    await engine.start(wf, { mode: "ok" }, { runId: "ok" });
    await waitFor(async () => (await pending(engine, "ok")).length === 1);
    const refused = await engine.respondToHuman("ok:ask#0", { action: "answer", option: "reject", message: "  " }).catch((e: unknown) => e);
    expect(isCairnError(refused, "INVALID_INPUT")).toBe(true);
    expect((refused as Error).message).toContain('"reject" needs a note');
    await engine.respondToHuman("ok:ask#0", { action: "answer", option: "reject", message: "not today" });
    expect(await engine.result("ok", { timeoutMs: 5000 })).toEqual({ option: "reject", message: "not today" });
  });

  it("refuses a malformed request before journaling anything", async () => {
    const wf = defineWorkflow({
      name: "malformed",
      async run(ctx, input: { mode: string }) {
        if (input.mode === "question") return ctx.askHuman({ question: " " });
        return ctx.askHuman({ question: "Ok?", options: ["yes"], onTimeout: { option: "no" } });
      },
    });
    const engine = await testEngine(kind, { workflows: [wf] });
    engine.startWorker(fast);
    for (const mode of ["question", "timeout"]) {
      await engine.start(wf, { mode }, { runId: mode });
      await waitFor(async () => (await engine.getRun(mode)).status === "failed");
      expect((await engine.journal(mode)).some((e) => e.kind === "human.requested")).toBe(false);
    }
    expect((await engine.getRun("question")).error?.message).toContain("non-empty `question`");
    expect((await engine.getRun("timeout")).error?.message).toContain("onTimeout");
  });
});
