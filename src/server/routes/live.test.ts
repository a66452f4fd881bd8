/**
 * The live-run routes over real HTTP with the typed client: start options (tags, delay, deadline),
 * GET /runs?tag=, GET /runs/:id/values/:name (404 VALUE_NOT_FOUND before a publish),
 * POST /runs/:id/requests/:name (idempotent by requestId; 422 REQUEST_FAILED), links in GET /runs/:id.
 */
import { describe, expect, it } from "vitest";
import { onCleanup, testEngine } from "../../../test/support/engines.js";
import { testServer } from "../../../test/support/server.js";
import { CairnClient } from "../../client/client.js";
import { isCairnError } from "../../core/errors.js";
import { defineWorkflow } from "../../engine/define-workflow.js";
import { waitFor } from "../../testing/wait-for.js";

const steerable = defineWorkflow({
  name: "steerable",
  async run(ctx, input: { topic: string }) {
    let topic = input.topic;
    ctx.handle("steer", (payload) => {
      const next = (payload as { topic?: unknown } | null)?.topic;
      if (typeof next !== "string") throw new Error("steer needs a topic");
      topic = next;
      return { topic };
    });
    await ctx.publish("progress", { topic, step: 1 });
    await ctx.waitForEvent("finish");
    await ctx.publish("progress", { topic, step: 2 });
    if (input.topic === "again") return ctx.continueAsNew({ topic: "done" });
    return topic;
  },
});

describe("live-run routes", () => {
  it("start with tags and a delay, filter by tag, read published values, send requests, follow continued runs", async () => {
    const engine = await testEngine("sqlite", { workflows: [steerable] });
    const worker = engine.startWorker({ pollInterval: 10 });
    onCleanup(() => worker.stop());
    const server = await testServer(engine);
    const client = new CairnClient({ baseUrl: server.url });

    const started = await client.startRun({ workflow: "steerable", input: { topic: "again" }, runId: "h1", tags: { customer: "acme" }, deadline: "2h" });
    expect(started.run).toMatchObject({ runId: "h1", tags: { customer: "acme" } });
    await client.startRun({ workflow: "steerable", input: { topic: "x" }, runId: "h2", tags: { customer: "globex" }, delay: "1h" });
    expect((await client.getRun("h2")).status).toBe("suspended");
    const bad = await client.startRun({ workflow: "steerable", input: null, tags: { customer: "a\u0000" } }).catch((error: unknown) => error);
    expect(isCairnError(bad, "INVALID_INPUT")).toBe(true);

    expect((await client.listRuns({ tags: { customer: "acme" } })).runs.map((r) => r.runId)).toEqual(["h1"]);
    expect((await client.listRuns({ tags: { customer: "acme", tier: "gold" } })).runs).toEqual([]);
    const badFilter = await fetch(`${server.url}/runs?tag=nocolon`);
    expect(badFilter.status).toBe(422);

    await waitFor(async () => (await client.getPublished("h1", "progress")) !== undefined, { what: "the first publish" });
    expect(await client.getPublished("h1", "progress")).toMatchObject({ name: "progress", value: { topic: "again", step: 1 } });
    expect(await client.getPublished("h1", "never")).toBeUndefined();
    const missing = await fetch(`${server.url}/runs/h1/values/never`);
    expect([missing.status, ((await missing.json()) as { error: { code: string } }).error.code]).toEqual([404, "VALUE_NOT_FOUND"]);

    expect(await client.sendRequest("h1", "steer", { topic: "tides" }, { requestId: "r1" })).toEqual({ requestId: "r1", reply: { topic: "tides" } });
    expect(await client.sendRequest("h1", "steer", { topic: "other" }, { requestId: "r1" })).toEqual({ requestId: "r1", reply: { topic: "tides" } });
    const failed = await client.sendRequest("h1", "steer", {}, { requestId: "r2" }).catch((error: unknown) => error);
    expect(isCairnError(failed, "REQUEST_FAILED")).toBe(true);
    expect((failed as { status: number }).status).toBe(422);
    const noHandler = await client.sendRequest("nope", "steer", {}).catch((error: unknown) => error);
    expect(isCairnError(noHandler, "RUN_NOT_FOUND")).toBe(true);

    await client.sendEvent("h1", { type: "finish" });
    await waitFor(async () => (await client.getRun("h1~2").catch(() => undefined))?.status === "suspended", { what: "the continued run" });
    expect(await client.getRun("h1")).toMatchObject({ status: "completed", continuedTo: "h1~2" });
    expect(await client.getRun("h1~2")).toMatchObject({ continuedFrom: "h1", tags: { customer: "acme" } });
    const audit = await engine.store.listAudit({ action: "run.request" });
    expect(audit.map((a) => a.target).sort()).toEqual(["h1", "h1", "h1", "nope"]);
  });
});
