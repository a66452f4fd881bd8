import { describe, expect, expectTypeOf, it } from "vitest";
import { z } from "zod";
import { STORE_KINDS, testEngine } from "../../test/support/engines.js";
import { testServer } from "../../test/support/server.js";
import { EventInvalidError, isCairnError } from "../core/errors.js";
import { waitFor } from "../testing/wait-for.js";
import { defineEvent } from "./define-event.js";
import { defineWorkflow } from "./define-workflow.js";
import { webhookSignature } from "./webhook-signature.js";

const fast = { pollInterval: 10 };
const orderCreated = defineEvent("order.created", z.object({ orderId: z.string(), total: z.number().nonnegative() }));
const orderCancelled = defineEvent("order.cancelled", z.object({ orderId: z.string() }));

/** Started by order.created; waits for a matching approval; cancelled by a matching order.cancelled. */
const fulfil = defineWorkflow({
  name: "fulfil",
  on: orderCreated,
  cancelOn: [{ event: orderCancelled, match: "orderId" }],
  async run(ctx, input: { orderId: string; total: number }) {
    const approval = await ctx.waitForEvent<{ orderId: string; by: string }>("approval", { match: { orderId: input.orderId } });
    return `${input.orderId} approved by ${approval.by}`;
  },
});
const audit = defineWorkflow({
  name: "audit-order",
  on: "order.created",
  async run(ctx, input: { orderId: string }) {
    return ctx.step("log", () => `audited ${input.orderId}`);
  },
});
const typed = defineWorkflow({
  name: "typed-wait",
  async run(ctx) {
    const order = await ctx.waitForEvent(orderCreated);
    expectTypeOf(order).toEqualTypeOf<{ orderId: string; total: number }>();
    return order.total * 2;
  },
});

describe.each(STORE_KINDS)("typed events and event triggers on %s", (kind) => {
  it("refuses a payload that fails its defineEvent schema, naming the field, and buffers nothing", async () => {
    const engine = await testEngine(kind, { workflows: [typed], events: [orderCreated] });
    await engine.start(typed, undefined, { runId: "t1" });
    const error = await engine.sendEvent("t1", "order.created", { orderId: 7 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EventInvalidError);
    expect(isCairnError(error, "EVENT_INVALID")).toBe(true);
    expect((error as EventInvalidError).issues.map((i) => i.path.join("."))).toEqual(["orderId", "total"]);
    expect(await engine.store.listInbox("t1")).toEqual([]);
    // By definition too, and the wait returns the parsed, typed payload.
    await expect(engine.sendEvent("t1", orderCreated, { orderId: "o", total: -1 })).rejects.toThrow(/total/);
    await engine.sendEvent("t1", orderCreated, { orderId: "o-1", total: 21 });
    engine.startWorker(fast);
    expect(await engine.handle("t1").result({ timeoutMs: 5000 })).toBe(42);
  });

  it("publishEvent starts one run per subscribed workflow, once per event id", async () => {
    const engine = await testEngine(kind, { workflows: [fulfil, audit] });
    const first = await engine.publishEvent(orderCreated, { orderId: "o-1", total: 5 }, { eventId: "evt-1" });
    expect(first.runs).toEqual([
      { workflow: "fulfil", runId: "fulfil:evt-1", created: true },
      { workflow: "audit-order", runId: "audit-order:evt-1", created: true },
    ]);
    const again = await engine.publishEvent("order.created", { orderId: "o-1", total: 5 }, { eventId: "evt-1" });
    expect(again.runs.map((r) => r.created)).toEqual([false, false]);
    await expect(engine.publishEvent("order.created", { orderId: 5 }, { eventId: "evt-2" })).rejects.toBeInstanceOf(EventInvalidError);
    const { runs } = await engine.listRuns();
    expect(runs.map((r) => r.runId).sort()).toEqual(["audit-order:evt-1", "fulfil:evt-1"]);
    engine.startWorker(fast);
    expect(await engine.handle("audit-order:evt-1").result({ timeoutMs: 5000 })).toBe("audited o-1");
  });

  it("a wait with match consumes only a matching event; others stay buffered", async () => {
    const engine = await testEngine(kind, { workflows: [fulfil] });
    await engine.publishEvent(orderCreated, { orderId: "o-9", total: 1 }, { eventId: "e9" });
    await engine.sendEvent("fulfil:e9", "approval", { orderId: "o-other", by: "mallory" }, { eventId: "a1" });
    engine.startWorker(fast);
    await waitFor(async () => (await engine.getRun("fulfil:e9")).status === "suspended", { timeoutMs: 5000 });
    await engine.sendEvent("fulfil:e9", "approval", { orderId: "o-9", by: "alice" }, { eventId: "a2" });
    expect(await engine.handle("fulfil:e9").result({ timeoutMs: 5000 })).toBe("o-9 approved by alice");
    const inbox = await engine.store.listInbox("fulfil:e9");
    expect(inbox.map((e) => [e.eventId, e.consumedSeq === null])).toEqual([
      ["a1", true],
      ["a2", false],
    ]);
  });

  it("cancelOn cancels the live runs whose input matches the event, and only those", async () => {
    const engine = await testEngine(kind, { workflows: [fulfil] });
    await engine.publishEvent(orderCreated, { orderId: "o-1", total: 1 }, { eventId: "c1" });
    await engine.publishEvent(orderCreated, { orderId: "o-2", total: 1 }, { eventId: "c2" });
    engine.startWorker(fast);
    await waitFor(async () => (await engine.getRun("fulfil:c2")).status === "suspended", { timeoutMs: 5000 });
    const result = await engine.publishEvent(orderCancelled, { orderId: "o-1" }, { eventId: "x1" });
    expect(result.cancelled).toEqual(["fulfil:c1"]);
    expect((await engine.getRun("fulfil:c1")).status).toBe("cancelled");
    expect((await engine.getRun("fulfil:c2")).status).toBe("suspended");
    // Repeating the cancel event finds nothing live to cancel.
    expect((await engine.publishEvent(orderCancelled, { orderId: "o-1" }, { eventId: "x1" })).cancelled).toEqual([]);
  });
});

describe("events over HTTP", () => {
  it("POST /events starts subscribers (202, then 200 for the same id) and answers 422 with the zod issues", async () => {
    const engine = await testEngine("sqlite", { workflows: [fulfil, audit, typed] });
    const server = await testServer(engine);
    const post = (path: string, body: unknown) =>
      fetch(`${server.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    const created = await post("/events", { type: "order.created", payload: { orderId: "h-1", total: 3 }, eventId: "h1" });
    expect(created.status).toBe(202);
    expect(((await created.json()) as { runs: unknown[] }).runs).toHaveLength(2);
    expect((await post("/events", { type: "order.created", payload: { orderId: "h-1", total: 3 }, eventId: "h1" })).status).toBe(200);
    const bad = await post("/events", { type: "order.created", payload: { orderId: "h-2" }, eventId: "h2" });
    expect(bad.status).toBe(422);
    const body = (await bad.json()) as { error: { code: string; issues: { path: string[] }[] } };
    expect(body.error.code).toBe("EVENT_INVALID");
    expect(body.error.issues.map((i) => i.path)).toEqual([["total"]]);
    await engine.start(typed, undefined, { runId: "h-typed" });
    expect((await post("/runs/h-typed/events", { type: "order.created", payload: { total: 1 } })).status).toBe(422);
    expect(await engine.store.listInbox("h-typed")).toEqual([]);
  });

  it("a webhook without runId publishes: a signed delivery starts the subscribed workflows once", async () => {
    const engine = await testEngine("sqlite", { workflows: [audit] });
    const server = await testServer(engine, {
      webhooks: {
        shop: { secret: "s3cret-webhook", type: "order.created", eventId: (b: { id: string }) => b.id, payload: (b: { order: unknown }) => b.order },
      },
    });
    const raw = JSON.stringify({ id: "wh-1", order: { orderId: "w-1", total: 2 } });
    const deliver = () =>
      fetch(`${server.url}/webhooks/shop`, {
        method: "POST",
        headers: { "content-type": "application/json", "cairn-signature": webhookSignature("s3cret-webhook", raw, Math.floor(Date.now() / 1000)) },
        body: raw,
      });
    expect((await deliver()).status).toBe(202);
    expect((await deliver()).status).toBe(200);
    expect((await engine.listRuns()).runs.map((r) => r.runId)).toEqual(["audit-order:wh-1"]);
  });
});
