import { describe, expect, it } from "vitest";
import { createEngine } from "../../src/engine/create-engine.js";
import { defineWorkflow } from "../../src/engine/define-workflow.js";
import type { EngineOptions } from "../../src/engine/engine.js";
import { silentLogger } from "../../src/engine/logger.js";
import type { OutboxDelivery } from "../../src/engine/outbox.js";
import type { HumanNoticePayload } from "../../src/engine/workflow.js";
import { waitFor } from "../../src/testing/wait-for.js";
import { onCleanup } from "./engines.js";

/** `ctx.askHuman({ notify })` on one store kind: `source` gives a fresh store URL per test. */
export function humanNotifySuite(kind: string, source: () => string): void {
  describe(`askHuman notify on ${kind}`, () => {
    it("each extension and the final escalation send one outbox message, with the request id, in the commit of their entry", async () => {
      const received: OutboxDelivery[] = [];
      const record = async (m: OutboxDelivery) => void received.push(m);
      const wf = defineWorkflow({
        name: "noisy",
        async run(ctx) {
          const reply = await ctx.askHuman({
            name: "refund",
            question: "Approve the refund?",
            options: ["yes", "no"],
            timeout: "40ms",
            onTimeout: { extend: "40ms", times: 2, then: { option: "no" } },
            notify: { data: { team: "support" } },
          });
          return reply.option;
        },
      });
      const options: EngineOptions = { workflows: [wf], outbox: { handlers: { "human.escalated": record, "human.timedout": record } } };
      const engine = await createEngine({ store: source(), logger: silentLogger, ...options });
      onCleanup(() => engine.close());
      engine.startWorker({ pollInterval: 10, dispatcher: { pollInterval: 10 } });
      await engine.start(wf, null, { runId: "loud" });
      expect(await engine.result("loud", { timeoutMs: 10_000 })).toBe("no");
      await waitFor(async () => (await engine.listOutbox({ runId: "loud", status: ["delivered"] })).length === 3, { what: "three notices delivered" });
      const requestId = "loud:refund#0";
      expect(received.map((m) => [m.topic, m.messageId]).sort()).toEqual([
        ["human.escalated", `${requestId}:extended:1`],
        ["human.escalated", `${requestId}:extended:2`],
        ["human.timedout", `${requestId}:timedout`],
      ]);
      const payload = (id: string) => received.find((m) => m.messageId === id)!.payload as HumanNoticePayload;
      expect(payload(`${requestId}:timedout`)).toEqual({
        event: "timedout",
        requestId,
        runId: "loud",
        question: "Approve the refund?",
        options: ["yes", "no"],
        escalation: "choose",
        option: "no",
        data: { team: "support" },
      });
      expect(payload(`${requestId}:extended:2`)).toMatchObject({ event: "extended", extension: 2, requestId, data: { team: "support" } });
      // Each message was inserted by the commit of its journal entry: its seq is that entry's.
      const journal = await engine.journal("loud");
      const bySeq = new Map(journal.map((e) => [e.seq, e.kind]));
      const rows = await engine.listOutbox({ runId: "loud" });
      expect(rows.map((m) => [m.messageId, bySeq.get(m.seq)]).sort()).toEqual([
        [`${requestId}:extended:1`, "human.extended"],
        [`${requestId}:extended:2`, "human.extended"],
        [`${requestId}:timedout`, "human.timedout"],
      ]);
    });

    it("an askHuman without notify writes no message; one answered in time writes none either", async () => {
      const wf = defineWorkflow({
        name: "quiet",
        async run(ctx, input: { notify: boolean }) {
          const reply = await ctx.askHuman({ question: "Ok?", timeout: input.notify ? "1h" : "40ms", onTimeout: { option: "auto" }, notify: input.notify });
          return reply.option;
        },
      });
      const engine = await createEngine({
        store: source(),
        logger: silentLogger,
        workflows: [wf],
        outbox: { handlers: { "human.timedout": async () => undefined } },
      });
      onCleanup(() => engine.close());
      engine.startWorker({ pollInterval: 10 });
      await engine.start(wf, { notify: false }, { runId: "silent" });
      expect(await engine.result("silent", { timeoutMs: 10_000 })).toBe("auto");
      await engine.start(wf, { notify: true }, { runId: "answered" });
      await waitFor(async () => (await engine.listHumanRequests({ runId: "answered", status: "pending" })).length === 1);
      await engine.respondToHuman("answered:ask#0", { action: "answer", option: "auto" });
      expect(await engine.result("answered", { timeoutMs: 10_000 })).toBe("auto");
      expect(await engine.listOutbox({})).toEqual([]);
    });
  });
}
