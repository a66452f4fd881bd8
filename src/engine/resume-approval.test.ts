/**
 * Fresh approval (`StepOptions.approval`) on SQLite and PostgreSQL, in process: after a sleep longer
 * than `afterSleep` a person is asked before the step runs; approved it runs once, refused it does
 * not run and the run fails with APPROVAL_REFUSED; a shorter sleep asks nothing; bad options are
 * refused at the call. (The crash case, with a SIGKILL, is test/resume-approval-crash.test.ts.)
 */
import { describe, expect, it } from "vitest";
import { onCleanup } from "../../test/support/engines.js";
import { DURABLE_STORES, durableStoreUrl, postgresReachable, type DurableStore } from "../../test/support/store-urls.js";
import { waitFor } from "../testing/wait-for.js";
import { createEngine } from "./create-engine.js";
import { defineWorkflow } from "./define-workflow.js";
import type { Engine } from "./engine.js";
import { silentLogger } from "./logger.js";
import type { Duration } from "../core/duration.js";
import type { Workflow } from "./workflow.js";

const pgUp = await postgresReachable();
const fast = { pollInterval: 10 };

async function engineOn(kind: DurableStore, workflows: Workflow<any, any>[]): Promise<Engine> {
  const engine = await createEngine({ store: durableStoreUrl(kind), workflows, logger: silentLogger });
  onCleanup(() => engine.close());
  const worker = engine.startWorker(fast);
  onCleanup(() => worker.stop());
  return engine;
}

function napThenSend(ran: string[]) {
  return defineWorkflow({
    name: "nap-then-send",
    async run(ctx, input: { limit: string }) {
      await ctx.sleep("nap", "300ms");
      return ctx.step("send", () => (ran.push("send"), "sent"), { approval: { afterSleep: input.limit as Duration } });
    },
  });
}

describe.each(DURABLE_STORES)("fresh approval on %s", (kind) => {
  const test = kind === "postgres" && !pgUp ? it.skip : it;

  test("after a sleep longer than afterSleep a person approves first; the step runs once", async () => {
    const ran: string[] = [];
    const engine = await engineOn(kind, [napThenSend(ran)]);
    await engine.start("nap-then-send", { limit: "100ms" }, { runId: "long-nap" });
    const request = await waitFor(async () => (await engine.listHumanRequests({ runIdPrefix: "long-nap", status: "pending" }))[0] ?? false, {
      timeoutMs: 20_000,
      what: "the approval request",
    });
    expect(request.opKey).toBe("approve:send@0#0");
    expect(ran).toEqual([]);
    await engine.respondToHuman(request.requestId, { action: "answer", option: "approve", by: "ops" });
    expect(await engine.result("long-nap", { timeoutMs: 20_000 })).toBe("sent");
    expect(ran).toEqual(["send"]);
  });

  test("refused, the step does not run and the run fails with APPROVAL_REFUSED", async () => {
    const ran: string[] = [];
    const engine = await engineOn(kind, [napThenSend(ran)]);
    await engine.start("nap-then-send", { limit: "100ms" }, { runId: "refused" });
    const request = await waitFor(async () => (await engine.listHumanRequests({ runIdPrefix: "refused", status: "pending" }))[0] ?? false, {
      timeoutMs: 20_000,
      what: "the approval request",
    });
    await engine.respondToHuman(request.requestId, { action: "answer", option: "refuse", by: "ops" });
    await expect(engine.result("refused", { timeoutMs: 20_000 })).rejects.toThrow(/needed a fresh approval/);
    expect((await engine.getRun("refused")).error?.code).toBe("APPROVAL_REFUSED");
    expect(ran).toEqual([]);
  });

  test("a sleep shorter than afterSleep asks nothing", async () => {
    const ran: string[] = [];
    const engine = await engineOn(kind, [napThenSend(ran)]);
    await engine.start("nap-then-send", { limit: "1h" }, { runId: "short-nap" });
    expect(await engine.result("short-nap", { timeoutMs: 20_000 })).toBe("sent");
    expect(await engine.listHumanRequests({ runIdPrefix: "short-nap" })).toEqual([]);
  });

  test("bad approval options are refused at the call", async () => {
    const wf = defineWorkflow({
      name: "bad-approval",
      async run(ctx) {
        const codes: string[] = [];
        for (const approval of [{}, { onResume: "yes" }, { afterSleep: "soon" }]) {
          try {
            await ctx.step("x", () => 1, { approval: approval as never });
          } catch (error) {
            codes.push((error as { code: string }).code);
          }
        }
        return codes;
      },
    });
    const engine = await engineOn(kind, [wf]);
    await engine.start(wf, {}, { runId: "bad" });
    expect(await engine.result("bad", { timeoutMs: 20_000 })).toEqual(["INVALID_INPUT", "INVALID_INPUT", "INVALID_INPUT"]);
  });
});
