import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { createEngine } from "../../src/engine/create-engine.js";
import { defineWorkflow } from "../../src/engine/define-workflow.js";
import type { Engine, EngineOptions } from "../../src/engine/engine.js";
import { silentLogger } from "../../src/engine/logger.js";
import type { OutboxDelivery } from "../../src/engine/outbox.js";
import { verifyWebhookSignature } from "../../src/engine/webhook-signature.js";
import type { Store } from "../../src/core/store.js";
import { waitFor } from "../../src/testing/wait-for.js";
import { onCleanup } from "./engines.js";

/** Where an outbox suite's engines keep their data: a fresh store URL per test, or a shared Store object. */
export type StoreSource = () => string | Store;

const fast = { pollInterval: 10 };

/**
 * Engine-level outbox behaviour on one store kind: `source` gives the store of each test; engines
 * made from the same `source()` result share it, like processes sharing a database.
 */
export function outboxEngineSuite(kind: string, source: StoreSource): void {
  async function engineOn(store: string | Store, options: EngineOptions = {}): Promise<Engine> {
    const engine = await createEngine({ store, logger: silentLogger, ...options });
    onCleanup(() => engine.close());
    return engine;
  }

  describe(`the outbox on ${kind}`, () => {
    it("emits once, atomically with the run's history: replay returns the same message id and writes no second message", async () => {
      let executions = 0;
      const wf = defineWorkflow({
        name: "checkout",
        async run(ctx, input: { order: string }) {
          executions += 1;
          const charged = await ctx.step("charge", () => ({ order: input.order, amount: 42 }));
          const first = await ctx.emit("order.paid", charged);
          await ctx.waitForEvent("shipped");
          const second = await ctx.emit("order.shipped", { order: input.order });
          return [first.messageId, second.messageId];
        },
      });
      const deliveries: OutboxDelivery[] = [];
      const engine = await engineOn(source(), { workflows: [wf] });
      engine.onMessage("order.paid", (d) => void deliveries.push(d));
      engine.onMessage("order.shipped", (d) => void deliveries.push(d));
      const worker = engine.startWorker(fast);
      const run = await engine.start(wf, { order: "o-1" }, { runId: "o-1" });
      await waitFor(async () => (await engine.getRun("o-1")).status === "suspended", { what: "the run to wait for shipping" });
      await engine.sendEvent("o-1", "shipped", {});
      expect(await run.result()).toEqual(["o-1:order.paid#0", "o-1:order.shipped#0"]);
      expect(executions).toBeGreaterThanOrEqual(2); // it replayed after the wait
      await waitFor(async () => (await engine.listOutbox({ status: ["delivered"] })).length === 2, { what: "both messages delivered" });
      await worker.stop({ drain: true });
      const journal = await engine.journal("o-1");
      expect(journal.filter((e) => e.kind === "outbox.emitted").map((e) => e.opKey)).toEqual(["order.paid#0", "order.shipped#0"]);
      const messages = await engine.listOutbox({ runId: "o-1" });
      expect(messages.map((m) => [m.messageId, m.topic, m.status, m.attempts])).toEqual([
        ["o-1:order.paid#0", "order.paid", "delivered", 1],
        ["o-1:order.shipped#0", "order.shipped", "delivered", 1],
      ]);
      // Same seq as the journal entry: the row was written by that entry's commit.
      expect(messages[0]!.seq).toBe(journal.find((e) => e.kind === "outbox.emitted")!.seq);
      expect(deliveries.map((d) => [d.messageId, d.payload, d.attempt])).toEqual([
        ["o-1:order.paid#0", { order: "o-1", amount: 42 }, 1],
        ["o-1:order.shipped#0", { order: "o-1" }, 1],
      ]);
    });

    it("fails the run with NonDeterminismError when replay emits to another topic under the same key", async () => {
      let topic = "a.topic";
      const wf = defineWorkflow({
        name: "fickle",
        async run(ctx) {
          await ctx.emit(topic, 1, { name: "notify" });
          await ctx.waitForEvent("go");
          return "done";
        },
      });
      const engine = await engineOn(source(), { workflows: [wf] });
      const worker = engine.startWorker({ ...fast, dispatcher: false });
      const run = await engine.start(wf, {}, { runId: "f-1" });
      await waitFor(async () => (await engine.getRun("f-1")).status === "suspended", { what: "the run to wait" });
      topic = "b.topic";
      await engine.sendEvent("f-1", "go", {});
      await expect(run.result()).rejects.toMatchObject({ code: "RUN_FAILED" });
      expect((await engine.getRun("f-1")).error).toMatchObject({ code: "NON_DETERMINISM" });
      expect((await engine.getRun("f-1")).error?.message).toContain('emit to topic "a.topic"');
      expect((await engine.listOutbox({})).map((m) => m.topic)).toEqual(["a.topic"]);
      await worker.stop();
    });

    it("rejects bad topics, payloads and outbox settings with typed errors", async () => {
      const wf = defineWorkflow({
        name: "bad-emit",
        async run(ctx) {
          return ctx.emit("has space", 1);
        },
      });
      const engine = await engineOn(source(), { workflows: [wf] });
      engine.startWorker({ ...fast, dispatcher: false });
      const run = await engine.start(wf, {});
      await expect(run.result()).rejects.toMatchObject({ code: "RUN_FAILED" });
      expect((await engine.getRun(run.runId)).error).toMatchObject({ code: "INVALID_INPUT" });
      expect(await engine.listOutbox({})).toEqual([]);
      expect(() => engine.onMessage("", () => undefined)).toThrow(/topic "" is not valid/);
      await expect(createEngine({ store: "memory:", outbox: { maxAttempts: 0 } })).rejects.toMatchObject({ code: "INVALID_INPUT" });
      await expect(createEngine({ store: "memory:", outbox: { webhooks: { t: { url: "ftp://x" } } } })).rejects.toThrow(/outbox.webhooks\["t"\].url/);
      await expect(engine.retryOutboxMessage("ghost:x#0")).rejects.toMatchObject({ code: "OUTBOX_MESSAGE_NOT_FOUND" });
      await expect(engine.listOutbox({ status: ["all" as never] })).rejects.toThrow(/listOutbox.*status/);
      await expect(engine.listOutbox({ limit: 0 })).rejects.toMatchObject({ code: "INVALID_INPUT" });
      expect(() => engine.startDispatcher({ concurrency: 0 })).toThrow(/concurrency/);
    });

    it("retries a failing handler with exponential back-off, recording attempts, next attempt and last error", async () => {
      const wf = defineWorkflow({
        name: "flaky",
        async run(ctx) {
          await ctx.emit("flaky.topic", { x: 1 });
        },
      });
      const calls: number[] = [];
      const engine = await engineOn(source(), {
        workflows: [wf],
        outbox: {
          maxAttempts: 5,
          backoff: { initial: 150, factor: 2, max: "1m" },
          handlers: {
            "flaky.topic": () => {
              calls.push(Date.now());
              if (calls.length < 3) throw new Error(`boom ${calls.length}`);
            },
          },
        },
      });
      const worker = engine.startWorker(fast);
      await engine.start(wf, {}, { runId: "fl" });
      const failed = await waitFor(async () => (await engine.listOutbox({})).find((m) => m.lastError === "boom 1" && m.leaseOwner === null), {
        what: "the first failure recorded",
      });
      expect(failed).toMatchObject({ status: "pending", attempts: 1 });
      expect(failed.nextAttemptAt).toBeGreaterThanOrEqual(calls[0]! + 140);
      const done = await waitFor(async () => (await engine.listOutbox({ status: ["delivered"] }))[0], { what: "delivery", timeoutMs: 10_000 });
      expect(done).toMatchObject({ messageId: "fl:flaky.topic#0", attempts: 3, lastError: "boom 2" });
      expect(calls).toHaveLength(3);
      expect(calls[1]! - calls[0]!).toBeGreaterThanOrEqual(140);
      expect(calls[2]! - calls[1]!).toBeGreaterThanOrEqual(290);
      await worker.stop();
    });

    it("marks a message dead after the last attempt, keeps it listed, and re-queues it on retry", async () => {
      const wf = defineWorkflow({
        name: "doomed",
        async run(ctx) {
          await ctx.emit("doomed.topic", "payload");
        },
      });
      let fixed = false;
      let calls = 0;
      const engine = await engineOn(source(), {
        workflows: [wf],
        outbox: {
          maxAttempts: 3,
          backoff: { initial: 10, factor: 1 },
          handlers: {
            "doomed.topic": () => {
              calls += 1;
              if (!fixed) throw new Error("receiver down");
            },
          },
        },
      });
      const worker = engine.startWorker(fast);
      await engine.start(wf, {}, { runId: "dd" });
      const dead = await waitFor(async () => (await engine.listOutbox({ status: ["dead"] }))[0], { what: "the message to die" });
      expect(dead).toMatchObject({ messageId: "dd:doomed.topic#0", attempts: 3, lastError: "receiver down", status: "dead" });
      expect(calls).toBe(3);
      expect(await engine.listOutbox({ status: ["pending"] })).toEqual([]);
      fixed = true;
      expect(await engine.retryOutboxMessage(dead.messageId)).toMatchObject({ applied: true, message: { status: "pending", attempts: 0 } });
      await waitFor(async () => (await engine.listOutbox({ status: ["delivered"] })).length === 1, { what: "delivery after the retry" });
      expect(calls).toBe(4);
      expect(await engine.retryOutboxMessage(dead.messageId)).toMatchObject({ applied: false, message: { status: "delivered" } });
      await worker.stop();
    });

    it("POSTs to a webhook on 127.0.0.1 with the message id and an HMAC signature, retrying a 5xx", async () => {
      const received: { headers: IncomingMessage["headers"]; body: string }[] = [];
      const server = createServer((req, res) => {
        let body = "";
        req.on("data", (chunk) => (body += chunk));
        req.on("end", () => {
          received.push({ headers: req.headers, body });
          res.statusCode = received.length === 1 ? 503 : 204;
          res.end(received.length === 1 ? "try later" : undefined);
        });
      });
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      onCleanup(() => new Promise<void>((resolve) => server.close(() => resolve())));
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
      const wf = defineWorkflow({
        name: "hooked",
        async run(ctx) {
          await ctx.emit("order.shipped", { order: 7, items: ["a", "b"] });
        },
      });
      const engine = await engineOn(source(), {
        workflows: [wf],
        outbox: { webhooks: { "order.shipped": { url, secret: "s3cret", headers: { authorization: "Bearer t" } } }, backoff: { initial: 20 } },
      });
      const worker = engine.startWorker(fast);
      await engine.start(wf, {}, { runId: "wh" });
      const delivered = await waitFor(async () => (await engine.listOutbox({ status: ["delivered"] }))[0], { what: "webhook delivery" });
      expect(delivered).toMatchObject({ attempts: 2, lastError: expect.stringContaining("HTTP 503: try later") as string });
      expect(received).toHaveLength(2);
      for (const [i, { headers, body }] of received.entries()) {
        expect(headers["cairn-message-id"]).toBe("wh:order.shipped#0");
        expect(headers["cairn-topic"]).toBe("order.shipped");
        expect(headers["cairn-attempt"]).toBe(String(i + 1));
        expect(headers["authorization"]).toBe("Bearer t");
        expect(headers["content-type"]).toBe("application/json");
        expect(verifyWebhookSignature("s3cret", Buffer.from(body), headers["cairn-signature"] as string)).toBeUndefined();
        expect(verifyWebhookSignature("other", Buffer.from(body), headers["cairn-signature"] as string)).toBe("mismatch");
        expect(JSON.parse(body)).toMatchObject({
          messageId: "wh:order.shipped#0",
          topic: "order.shipped",
          runId: "wh",
          payload: { order: 7, items: ["a", "b"] },
          attempt: i + 1,
        });
      }
      await worker.stop();
    });

    it("two dispatchers sharing the store never deliver one message concurrently", async () => {
      const wf = defineWorkflow({
        name: "burst",
        async run(ctx) {
          for (let i = 0; i < 30; i++) await ctx.emit("burst.topic", i);
        },
      });
      const store = source();
      const open = new Map<string, number>();
      const log: { messageId: string; by: string }[] = [];
      let overlaps = 0;
      const handler = (by: string) => async (d: OutboxDelivery) => {
        open.set(d.messageId, (open.get(d.messageId) ?? 0) + 1);
        if (open.get(d.messageId)! > 1) overlaps += 1;
        await new Promise((r) => setTimeout(r, 5));
        log.push({ messageId: d.messageId, by });
        open.set(d.messageId, open.get(d.messageId)! - 1);
      };
      const a = await engineOn(store, { workflows: [wf], outbox: { handlers: { "burst.topic": handler("a") } } });
      const b = await engineOn(typeof store === "string" ? store : a.store, { outbox: { handlers: { "burst.topic": handler("b") } } });
      const da = a.startDispatcher({ ...fast, concurrency: 4 });
      const db = b.startDispatcher({ ...fast, concurrency: 4 });
      a.startWorker({ ...fast, dispatcher: false });
      await a.start(wf, {}, { runId: "burst" });
      await waitFor(async () => (await a.listOutbox({ status: ["delivered"], limit: 100 })).length === 30, { what: "30 deliveries", timeoutMs: 20_000 });
      await Promise.all([da.stop({ drain: true }), db.stop({ drain: true })]);
      expect(overlaps).toBe(0);
      expect(log).toHaveLength(30);
      expect(new Set(log.map((l) => l.messageId)).size).toBe(30);
    });
  });
}
