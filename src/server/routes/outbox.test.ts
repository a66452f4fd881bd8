import { describe, expect, it } from "vitest";
import { testEngine } from "../../../test/support/engines.js";
import { testServer } from "../../../test/support/server.js";
import { CairnClient } from "../../client/client.js";
import { apiOutboxMessageSchema } from "../../core/outbox.js";
import { defineWorkflow } from "../../engine/define-workflow.js";
import { waitFor } from "../../testing/wait-for.js";
import { issueToken } from "../auth/tokens.js";

const notifier = defineWorkflow({
  name: "notifier",
  async run(ctx) {
    await ctx.emit("mail.send", { to: "ada" });
    await ctx.emit("sms.send", { to: "bob" });
  },
});

describe("GET /outbox", () => {
  it("lists undelivered messages by default, others by status; admin scope only under token auth", async () => {
    const engine = await testEngine("sqlite", {
      workflows: [notifier],
      outbox: { maxAttempts: 1, handlers: { "mail.send": () => Promise.reject(new Error("SMTP 550")) } },
    });
    const worker = engine.startWorker({ pollInterval: 10 });
    await (await engine.start(notifier, {}, { runId: "n-1" })).result();
    await waitFor(async () => (await engine.listOutbox({ status: ["dead"] })).length === 1, { what: "the mail message to die" });
    await worker.stop();
    const server = await testServer(engine, { auth: "tokens" });
    const now = Date.now();
    const admin = (await issueToken(engine.store, { name: "root", scopes: ["admin"] }, now)).token;
    const reader = (await issueToken(engine.store, { name: "viewer", scopes: ["read"] }, now)).token;

    const get = (token: string, query = "") => fetch(`${server.url}/outbox${query}`, { headers: { authorization: `Bearer ${token}` } });
    expect((await get(reader)).status).toBe(403);
    const pending = (await (await get(admin)).json()) as { messages: unknown[] };
    expect(pending.messages.map((m) => apiOutboxMessageSchema.parse(m))).toMatchObject([
      { messageId: "n-1:sms.send#0", topic: "sms.send", status: "pending", attempts: 0, payload: { to: "bob" } },
    ]);
    const client = new CairnClient({ baseUrl: server.url, headers: { authorization: `Bearer ${admin}` } });
    const dead = await client.listOutbox({ status: "dead" });
    expect(dead).toMatchObject([{ messageId: "n-1:mail.send#0", status: "dead", attempts: 1, lastError: "SMTP 550", nextAttemptAt: null }]);
    expect((await client.listOutbox({ status: "all" })).map((m) => m.messageId)).toEqual(["n-1:mail.send#0", "n-1:sms.send#0"]);
    const bad = await get(admin, "?status=lost");
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { code: string; message: string } }).error).toMatchObject({
      code: "INVALID_INPUT",
      message: expect.stringContaining('unknown status "lost"') as string,
    });

    // POST /outbox/:id/retry: admin only, re-queues a dead message once, audited; unknown ids are 404.
    const retry = (token: string, id: string) =>
      fetch(`${server.url}/outbox/${encodeURIComponent(id)}/retry`, { method: "POST", headers: { authorization: `Bearer ${token}` } });
    expect((await retry(reader, "n-1:mail.send#0")).status).toBe(403);
    const requeued = await retry(admin, "n-1:mail.send#0");
    expect(requeued.status).toBe(200);
    expect(await requeued.json()).toMatchObject({ applied: true, message: { messageId: "n-1:mail.send#0", status: "pending", attempts: 0 } });
    expect(await client.retryOutboxMessage("n-1:mail.send#0")).toMatchObject({ applied: false, message: { status: "pending" } });
    expect((await retry(admin, "n-1:nothing#0")).status).toBe(404);
    const audited = await engine.store.listAudit({ limit: 10 });
    expect(audited.filter((a) => a.action === "outbox.retry").map((a) => a.target)).toEqual(["n-1:mail.send#0"]);
  });
});
