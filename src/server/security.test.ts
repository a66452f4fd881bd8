import { createHmac } from "node:crypto";
import { webhookSignature } from "../engine/webhook-signature.js";
import { describe, expect, it } from "vitest";
import { onCleanup, testEngine } from "../../test/support/engines.js";
import { ask, flaky, flakyState, paced, testServer } from "../../test/support/server.js";
import { defineWorkflow } from "../engine/define-workflow.js";
import type { Engine } from "../engine/engine.js";
import { waitFor } from "../testing/wait-for.js";
import { issueToken } from "./auth/tokens.js";
import type { ServerOptions } from "./options.js";
import { serve } from "./serve.js";

const secretive = defineWorkflow({
  name: "secretive",
  version: "1",
  async run(ctx) {
    const key = await ctx.step("key", () => "sk-live-SECRET", { secret: true, searchText: (v) => v });
    await ctx.step("plain", () => "visible-value");
    await ctx.waitForEvent("go");
    return key.length;
  },
});

const WORKFLOWS = [paced, ask, flaky, secretive];

/** A real 127.0.0.1 server with token auth, a worker, and tokens of each kind. */
async function setup(options: { webhooks?: ServerOptions["webhooks"] } = {}) {
  const logged: string[] = [];
  const logger = { log: (...args: unknown[]) => void logged.push(JSON.stringify(args)) };
  const engine = await testEngine("sqlite", { workflows: WORKFLOWS, logger });
  const worker = engine.startWorker({ pollInterval: 10 });
  onCleanup(() => worker.stop());
  const server = await testServer(engine, { auth: "tokens", logger, ...(options.webhooks ? { webhooks: options.webhooks } : {}) });
  const now = Date.now();
  const tokens = {
    admin: (await issueToken(engine.store, { name: "root", scopes: ["admin"] }, now)).token,
    reader: (await issueToken(engine.store, { name: "viewer", scopes: ["read"] }, now)).token,
    writer: (await issueToken(engine.store, { name: "ops", scopes: ["read", "write"] }, now)).token,
    teamA: (await issueToken(engine.store, { name: "team-a", scopes: ["read", "write"], namespace: "a" }, now)).token,
  };
  const call = async (token: string | undefined, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`${server.url}${path}`, {
      method,
      headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
      ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, text, body: (res.headers.get("content-type")?.includes("json") ? JSON.parse(text) : text) as any };
  };
  return { engine, server, tokens, call, logged };
}

const status = (engine: Engine, runId: string) => engine.getRun(runId).then((r) => r.status);

describe("token auth", () => {
  it("401 without or with a bad token, 403 without the scope, public health and openapi", async () => {
    const { tokens, call } = await setup();
    expect((await call(undefined, "GET", "/runs")).body.error.code).toBe("UNAUTHORIZED");
    expect((await call(undefined, "GET", "/runs")).status).toBe(401);
    expect((await call("cairn_0000000000000000_" + "A".repeat(43), "GET", "/runs")).status).toBe(401);
    expect((await call("not-a-token", "GET", "/runs")).status).toBe(401);
    // The right id with a wrong secret.
    const forged = tokens.reader.slice(0, 23) + (tokens.reader[23] === "A" ? "B" : "A") + tokens.reader.slice(24);
    expect((await call(forged, "GET", "/runs")).status).toBe(401);
    expect((await call(tokens.reader, "GET", "/runs")).status).toBe(200);
    const denied = await call(tokens.reader, "POST", "/runs", { workflow: "paced", input: { steps: 1 }, runId: "x" });
    expect([denied.status, denied.body.error.code]).toEqual([403, "FORBIDDEN"]);
    expect((await call(tokens.writer, "GET", "/audit")).status).toBe(403);
    expect((await call(tokens.writer, "POST", "/tokens", { name: "n", scopes: ["read"] })).status).toBe(403);
    expect((await call(tokens.admin, "GET", "/runs")).status).toBe(403);
    expect((await call(undefined, "GET", "/health")).status).toBe(200);
    expect((await call(undefined, "GET", "/openapi.json")).status).toBe(200);
  });

  it("a namespaced token sees and acts only on its runs: others are 404, as if they did not exist", async () => {
    const { engine, tokens, call } = await setup();
    await engine.start("paced", { steps: 1 }, { runId: "b/other" });
    await engine.start("ask", null, { runId: "b/asks" });
    const mine = await call(tokens.teamA, "POST", "/runs", { workflow: "paced", input: { steps: 1 }, runId: "a/mine" });
    expect(mine.status).toBe(201);
    const generated = await call(tokens.teamA, "POST", "/runs", { workflow: "paced", input: { steps: 1 } });
    expect(generated.body.run.runId).toMatch(/^a\//);
    expect((await call(tokens.teamA, "POST", "/runs", { workflow: "paced", input: { steps: 1 }, runId: "b/new" })).status).toBe(403);
    for (const [method, path, body] of [
      ["GET", "/runs/b%2Fother"],
      ["GET", "/runs/b%2Fother/journal"],
      ["GET", "/runs/b%2Fother/stream"],
      ["POST", "/runs/b%2Fother/events", { type: "go" }],
      ["POST", "/runs/b%2Fother/cancel"],
      ["POST", "/runs/b%2Fother/retry"],
    ] as const) {
      const res = await call(tokens.teamA, method, path, body);
      expect([method, path, res.status, res.body.error?.code]).toEqual([method, path, 404, "RUN_NOT_FOUND"]);
    }
    expect((await call(tokens.teamA, "GET", "/runs/a%2Fmine")).status).toBe(200);
    const listed = await call(tokens.teamA, "GET", "/runs?limit=1");
    expect(listed.body.runs.every((r: any) => r.runId.startsWith("a/"))).toBe(true);
    const all = await call(tokens.teamA, "GET", "/runs");
    expect(all.body.runs.map((r: any) => r.runId).sort()).toEqual(["a/mine", generated.body.run.runId].sort());
    expect((await call(tokens.writer, "GET", "/runs")).body.runs).toHaveLength(4);
    await waitFor(async () => (await engine.listHumanRequests({})).length === 1);
    expect((await call(tokens.teamA, "GET", "/human-requests")).body.requests).toEqual([]);
    const answer = await call(tokens.teamA, "POST", "/human-requests/b%2Fasks%3Areview%230/answer", { action: "answer", option: "approve" });
    expect([answer.status, answer.body.error.code]).toEqual([404, "HUMAN_REQUEST_NOT_FOUND"]);
    expect(await status(engine, "b/other")).not.toBe("cancelled");
  });

  it("a namespaced token pages through its runs in full pages among many interleaved foreign runs", async () => {
    const { engine, tokens, call } = await setup();
    const ours: string[] = [];
    for (let i = 0; i < 12; i++) {
      for (let j = 0; j < 8; j++) await engine.start("paced", { steps: 0 }, { runId: `b/${i}-${j}` });
      await engine.start("paced", { steps: 0 }, { runId: `a/${i}` });
      await engine.start("paced", { steps: 0 }, { runId: `a_${i}` }); // not in namespace "a"
      ours.push(`a/${i}`);
    }
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await call(tokens.teamA, "GET", `/runs?limit=5${cursor ? `&cursor=${cursor}` : ""}`);
      expect(page.status).toBe(200);
      if (page.body.nextCursor) expect(page.body.runs).toHaveLength(5);
      seen.push(...page.body.runs.map((r: any) => r.runId));
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(seen.sort()).toEqual(ours.sort());
  });

  it("a namespaced token pages through its human requests in full pages, behind more older foreign ones than a page holds", async () => {
    const { engine, tokens, call } = await setup();
    // Six foreign questions, older than ours, then three of ours.
    for (let i = 0; i < 6; i++) await engine.start("ask", null, { runId: `b/q${i}` });
    await waitFor(async () => (await engine.listHumanRequests({ status: "pending" })).length === 6);
    for (let i = 0; i < 3; i++) await engine.start("ask", null, { runId: `a/q${i}` });
    await waitFor(async () => (await engine.listHumanRequests({ status: "pending" })).length === 9);
    const first = await call(tokens.teamA, "GET", "/human-requests?status=pending&limit=2");
    expect(first.status).toBe(200);
    expect(first.body.requests.map((r: any) => r.runId)).toHaveLength(2);
    expect(first.body.requests.every((r: any) => r.runId.startsWith("a/"))).toBe(true);
    const second = await call(tokens.teamA, "GET", `/human-requests?status=pending&limit=2&cursor=${first.body.nextCursor}`);
    expect(second.body.requests).toHaveLength(1);
    expect(second.body.nextCursor).toBeUndefined();
    const seen = [...first.body.requests, ...second.body.requests].map((r: any) => r.runId).sort();
    expect(seen).toEqual(["a/q0", "a/q1", "a/q2"]);
    // A prefix inside the namespace narrows it; one outside it sees nothing.
    expect((await call(tokens.teamA, "GET", "/human-requests?runIdPrefix=a%2Fq1")).body.requests.map((r: any) => r.runId)).toEqual(["a/q1"]);
    expect((await call(tokens.teamA, "GET", "/human-requests?runIdPrefix=b%2F")).body.requests).toEqual([]);
    expect((await call(tokens.writer, "GET", "/human-requests?limit=1000")).body.requests).toHaveLength(9);
  });

  it("under token auth the recorded answerer is the token, whatever the body's `by` says", async () => {
    const { engine, tokens, call } = await setup();
    await call(tokens.writer, "POST", "/runs", { workflow: "ask", runId: "who" });
    await waitFor(async () => (await engine.listHumanRequests({ runId: "who" })).length === 1);
    const answered = await call(tokens.writer, "POST", "/human-requests/who%3Areview%230/answer", { action: "answer", option: "approve", by: "the-ceo" });
    expect(answered.status).toBe(200);
    expect(answered.body.request.answer.by).toBe("token:ops");
    // The journal (what the workflow saw) and the audit log say the same; the claimed name is kept apart.
    await waitFor(async () => (await status(engine, "who")) === "completed");
    const journal = await engine.journal("who");
    expect(journal.find((e) => e.kind === "human.answered")?.data).toMatchObject({ answer: { by: "token:ops" } });
    const audit = await call(tokens.admin, "GET", "/audit?target=who%3Areview%230");
    expect(audit.body.entries[0]).toMatchObject({ actor: "token:ops", action: "human.answer", detail: { claimedBy: "the-ceo" } });
  });

  it("every privileged action lands in the audit log with actor, action, target and time", async () => {
    const { engine, tokens, call } = await setup();
    const before = Date.now();
    await call(tokens.writer, "POST", "/runs", { workflow: "paced", input: { steps: 1 }, runId: "p" });
    await call(tokens.writer, "POST", "/runs/p/events", { type: "go", eventId: "e1" });
    await call(tokens.writer, "POST", "/runs/p/events", { type: "go", eventId: "e1" }); // duplicate: not an action
    await call(tokens.writer, "POST", "/runs", { workflow: "paced", input: { steps: 3 }, runId: "c" });
    await call(tokens.writer, "POST", "/runs/c/cancel", { reason: "enough" });
    flakyState.healed = false;
    await call(tokens.writer, "POST", "/runs", { workflow: "flaky", runId: "f" });
    await waitFor(async () => (await status(engine, "f")) === "failed");
    flakyState.healed = true;
    expect((await call(tokens.writer, "POST", "/runs/f/retry")).status).toBe(200);
    await call(tokens.writer, "POST", "/runs", { workflow: "ask", runId: "q" });
    await waitFor(async () => (await engine.listHumanRequests({ runId: "q" })).length === 1);
    expect((await call(tokens.writer, "POST", "/human-requests/q%3Areview%230/answer", { action: "answer", option: "approve" })).status).toBe(200);
    const made = await call(tokens.admin, "POST", "/tokens", { name: "bot", scopes: ["read"] });
    expect(made.status).toBe(201);
    expect((await call(tokens.admin, "POST", `/tokens/${made.body.record.id}/revoke`)).status).toBe(200);
    expect((await call(tokens.admin, "POST", `/tokens/${made.body.record.id}/revoke`)).body.error.code).toBe("TOKEN_NOT_FOUND");
    expect((await call(made.body.token, "GET", "/runs")).status).toBe(401);

    const audit = await call(tokens.admin, "GET", "/audit?limit=100");
    const rows = (audit.body.entries as any[]).reverse().map((e) => [e.actor, e.action, e.target]);
    expect(rows).toEqual([
      ["token:ops", "run.start", "p"],
      ["token:ops", "run.event", "p"],
      ["token:ops", "run.start", "c"],
      ["token:ops", "run.cancel", "c"],
      ["token:ops", "run.start", "f"],
      ["token:ops", "run.retry", "f"],
      ["token:ops", "run.start", "q"],
      ["token:ops", "human.answer", "q:review#0"],
      ["token:root", "token.create", made.body.record.id],
      ["token:root", "token.revoke", made.body.record.id],
    ]);
    for (const entry of audit.body.entries) expect(Date.parse(entry.at)).toBeGreaterThanOrEqual(before - 5);
    const page = await call(tokens.admin, "GET", "/audit?limit=2");
    expect(page.body.entries).toHaveLength(2);
    const next = await call(tokens.admin, "GET", `/audit?limit=100&beforeId=${page.body.nextBefore}`);
    expect(next.body.entries).toHaveLength(8);
    expect((await call(tokens.admin, "GET", "/audit?target=c")).body.entries.map((e: any) => e.action)).toEqual(["run.cancel", "run.start"]);
  });

  it("token texts appear only in the create response: not in lists, the audit log or the logs", async () => {
    const { tokens, call, logged } = await setup();
    const made = await call(tokens.admin, "POST", "/tokens", { name: "bot", scopes: ["read", "write"], namespace: "a" });
    const secret = (made.body.token as string).slice(24);
    const listed = await call(tokens.admin, "GET", "/tokens");
    expect(listed.body.tokens.map((t: any) => t.name).sort()).toEqual(["bot", "ops", "root", "team-a", "viewer"]);
    expect(listed.body.tokens[0]).not.toHaveProperty("hash");
    for (const token of Object.values(tokens)) expect(listed.text).not.toContain(token.slice(24));
    expect(listed.text).not.toContain(secret);
    expect((await call(tokens.admin, "GET", "/audit")).text).not.toContain(secret);
    expect((await call(tokens.admin, "POST", "/tokens", { name: "bad", scopes: ["admin"], namespace: "a" })).status).toBe(422);
    await call("cairn_0000000000000000_" + "A".repeat(43), "GET", "/runs");
    expect(logged.join("\n")).not.toContain(secret);
    for (const token of Object.values(tokens)) expect(logged.join("\n")).not.toContain(token.slice(24));
  });
});

describe("secret step results", () => {
  it("are redacted in the journal route, the stream and engine.journal, yet replay still gets them", async () => {
    const { engine, tokens, call } = await setup();
    await call(tokens.writer, "POST", "/runs", { workflow: "secretive", runId: "s" });
    await waitFor(async () => (await status(engine, "s")) === "suspended");
    const journal = await call(tokens.reader, "GET", "/runs/s/journal");
    expect(journal.text).not.toContain("sk-live-SECRET");
    const key = journal.body.entries.find((e: any) => e.kind === "step.completed" && e.opKey === "key#0");
    expect(key.data).toEqual({ result: "[redacted]", attempt: 1, secret: true });
    expect(journal.text).toContain("visible-value");
    expect(JSON.stringify(await engine.journal("s"))).not.toContain("sk-live-SECRET");
    await call(tokens.writer, "POST", "/runs/s/events", { type: "go" });
    await waitFor(async () => (await status(engine, "s")) === "completed");
    expect((await engine.getRun("s")).output).toBe("sk-live-SECRET".length);
    const stream = await call(tokens.reader, "GET", "/runs/s/stream");
    expect(stream.text).toContain("event: end");
    expect(stream.text).toContain("[redacted]");
    expect(stream.text).not.toContain("sk-live-SECRET");
    // The journal itself keeps the value: replay needs it.
    expect(JSON.stringify(await engine.store.readJournal("s"))).toContain("sk-live-SECRET");
  });
});

describe("webhooks", () => {
  const sign = (secret: string, body: string) => webhookSignature(secret, body, Math.floor(Date.now() / 1000));

  it("delivers a signed event once per event id; a bad or missing signature is 401 and delivers nothing", async () => {
    const { engine, call } = await setup({
      webhooks: { ci: { secret: "whsec-1", runId: (b: any) => b.run, type: "go", eventId: (b: any) => b.delivery, payload: (b: any) => b.data } },
    });
    await engine.start("paced", { steps: 1 }, { runId: "w" });
    const body = JSON.stringify({ run: "w", delivery: "d-1", data: { ok: true } });
    const unsigned = await call(undefined, "POST", "/webhooks/ci", body);
    expect([unsigned.status, unsigned.body.error.code]).toEqual([401, "UNAUTHORIZED"]);
    expect((await call(undefined, "POST", "/webhooks/ci", body, { "x-cairn-signature": sign("wrong", body) })).status).toBe(401);
    expect((await call(undefined, "POST", "/webhooks/ci", body + " ", { "x-cairn-signature": sign("whsec-1", body) })).status).toBe(401);
    expect(
      (await call(undefined, "POST", "/webhooks/ci", body, { "x-cairn-signature": `sha256=${createHmac("sha256", "whsec-1").update(body).digest("hex")}` }))
        .status,
    ).toBe(401);
    expect(await engine.store.listInbox("w")).toEqual([]);
    const ok = await call(undefined, "POST", "/webhooks/ci", body, { "x-cairn-signature": sign("whsec-1", body) });
    expect(ok).toMatchObject({ status: 202, body: { runId: "w", eventId: "d-1", duplicate: false } });
    const replay = await call(undefined, "POST", "/webhooks/ci", body, { "x-cairn-signature": sign("whsec-1", body) });
    expect(replay).toMatchObject({ status: 200, body: { duplicate: true } });
    await waitFor(async () => (await status(engine, "w")) === "completed");
    expect((await engine.store.listInbox("w")).map((e) => [e.type, e.eventId])).toEqual([["go", "d-1"]]);
    expect((await engine.store.listAudit({ actor: "webhook:ci" })).map((e) => [e.action, e.target])).toEqual([["run.event", "w"]]);
    expect((await call(undefined, "POST", "/webhooks/nope", body, { "x-cairn-signature": sign("whsec-1", body) })).status).toBe(404);
    const unmappable = JSON.stringify({ delivery: "d-2" });
    expect((await call(undefined, "POST", "/webhooks/ci", unmappable, { "x-cairn-signature": sign("whsec-1", unmappable) })).status).toBe(400);
  });
});

describe("serve", () => {
  it("refuses a non-loopback host without token auth", async () => {
    const engine = await testEngine("memory", { workflows: WORKFLOWS });
    await expect(serve(engine, { host: "0.0.0.0", port: 0 })).rejects.toThrow(/without authentication.*auth: "tokens"/);
  });
});
