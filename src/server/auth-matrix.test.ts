import { webhookSignature } from "../engine/webhook-signature.js";
import { describe, expect, it } from "vitest";
import { onCleanup, testEngine } from "../../test/support/engines.js";
import { TEST_WORKFLOWS } from "../../test/support/server.js";
import type { TokenScope } from "../core/store.js";
import type { Engine } from "../engine/engine.js";
import { waitFor } from "../testing/wait-for.js";
import { issueToken, hashSecret } from "./auth/tokens.js";
import { createServer } from "./create-server.js";
import { ROUTES } from "./openapi.js";

/**
 * Every route × every kind of caller. Each route of the OpenAPI table (itself checked against the
 * app's routes in routes/system.test.ts, and again here) must have a rule below: a new route without
 * one fails this file, so its auth is decided, not inherited by accident.
 *
 * - `scope`: what a token needs (`public`: nothing; the route answers the same to everyone).
 * - `namespaced`: what a token with a namespace gets when it has the scope. `allowed`: like any
 *   token (lists are filtered); `refused`: 403, the answer spans every namespace; `own-runs`: the
 *   route names a run (or a request of one), and one outside the namespace is 404.
 * - `unknownId`: the request names a token or message that does not exist, so 404 is a pass.
 */
type Rule = { scope: "public" | TokenScope; namespaced: "allowed" | "refused" | "own-runs"; request: (t: Target) => Req; unknownId?: true };
type Req = { path: string; body?: unknown; headers?: Record<string, string> };
/** What a request is aimed at: the caller's name and a namespace ("a" is the namespaced tokens' own, "b" is foreign). */
type Target = { caller: string; ns: "a" | "b"; exported: unknown };

const enc = encodeURIComponent;
const run = (t: Target) => enc(`${t.ns}/r-${t.caller}`);
const WEBHOOK_SECRET = "whsec-matrix";
const signed = (body: unknown): Req["headers"] => ({
  "cairn-signature": webhookSignature(WEBHOOK_SECRET, JSON.stringify(body), Math.floor(Date.now() / 1000)),
});

const RULES: Record<string, Rule> = {
  "post /runs": {
    scope: "write",
    namespaced: "allowed",
    request: (t) => ({ path: "/runs", body: { workflow: "paced", input: { steps: 0 }, runId: `a/new-${t.caller}` } }),
  },
  "get /runs": { scope: "read", namespaced: "allowed", request: () => ({ path: "/runs" }) },
  "get /stuck-runs": { scope: "read", namespaced: "allowed", request: () => ({ path: "/stuck-runs?graceMs=0" }) },
  "get /run-count": { scope: "read", namespaced: "allowed", request: () => ({ path: "/run-count" }) },
  "get /workflows": { scope: "read", namespaced: "allowed", request: () => ({ path: "/workflows" }) },
  "post /bulk/cancel": { scope: "write", namespaced: "own-runs", request: (t) => ({ path: "/bulk/cancel", body: { runIds: [`${t.ns}/r-${t.caller}`] } }) },
  "post /bulk/retry": { scope: "write", namespaced: "own-runs", request: (t) => ({ path: "/bulk/retry", body: { runIds: [`${t.ns}/r-${t.caller}`] } }) },
  "get /runs/:id": { scope: "read", namespaced: "own-runs", request: (t) => ({ path: `/runs/${run(t)}` }) },
  "get /runs/:id/journal": { scope: "read", namespaced: "own-runs", request: (t) => ({ path: `/runs/${run(t)}/journal` }) },
  "get /runs/:id/journal/:seq": { scope: "read", namespaced: "own-runs", request: (t) => ({ path: `/runs/${run(t)}/journal/1` }) },
  "get /runs/:id/costs": { scope: "read", namespaced: "own-runs", request: (t) => ({ path: `/runs/${run(t)}/costs` }) },
  "get /runs/:id/stream": { scope: "read", namespaced: "own-runs", request: (t) => ({ path: `/runs/${run(t)}/stream` }) },
  "post /runs/:id/events": {
    scope: "write",
    namespaced: "own-runs",
    request: (t) => ({ path: `/runs/${run(t)}/events`, body: { type: "go", eventId: "e1" } }),
  },
  "get /runs/:id/values/:name": { scope: "read", namespaced: "own-runs", unknownId: true, request: (t) => ({ path: `/runs/${run(t)}/values/progress` }) },
  "post /runs/:id/requests/:name": {
    scope: "write",
    namespaced: "own-runs",
    request: (t) => ({ path: `/runs/${run(t)}/requests/steer`, body: { requestId: `q-${t.caller}`, timeoutMs: 0 } }),
  },
  "post /runs/:id/fork": { scope: "write", namespaced: "own-runs", request: (t) => ({ path: `/runs/${run(t)}/fork`, body: { atSeq: 1 } }) },
  "post /runs/:id/cancel": { scope: "write", namespaced: "own-runs", request: (t) => ({ path: `/runs/${run(t)}/cancel`, body: {} }) },
  "post /runs/:id/retry": { scope: "write", namespaced: "own-runs", request: (t) => ({ path: `/runs/${run(t)}/retry` }) },
  "get /runs/:id/export": { scope: "admin", namespaced: "own-runs", request: (t) => ({ path: `/runs/${run(t)}/export?force=true` }) },
  "post /runs/import": {
    scope: "admin",
    namespaced: "own-runs",
    request: (t) => ({ path: `/runs/import?as=${enc(`${t.ns}/imp-${t.caller}`)}`, body: t.exported }),
  },
  "get /human-requests": { scope: "read", namespaced: "allowed", request: () => ({ path: "/human-requests" }) },
  "post /human-requests/:id/answer": {
    scope: "write",
    namespaced: "own-runs",
    request: (t) => ({ path: `/human-requests/${enc(`${t.ns}/ask:review#0`)}/answer`, body: { action: "answer", option: "approve" } }),
  },
  "post /tokens": { scope: "admin", namespaced: "refused", request: (t) => ({ path: "/tokens", body: { name: `made-by-${t.caller}`, scopes: ["read"] } }) },
  "get /tokens": { scope: "admin", namespaced: "refused", request: () => ({ path: "/tokens" }) },
  "post /tokens/:id/revoke": { scope: "admin", namespaced: "refused", request: () => ({ path: "/tokens/0123456789abcdef/revoke" }), unknownId: true },
  "post /auth/tickets": { scope: "read", namespaced: "allowed", request: () => ({ path: "/auth/tickets", body: {} }) },
  // Public (it checks the ticket in its body); an empty body is a 400, not a 401.
  "post /auth/session": { scope: "public", namespaced: "allowed", request: () => ({ path: "/auth/session", body: {} }) },
  "get /audit": { scope: "admin", namespaced: "refused", request: () => ({ path: "/audit" }) },
  "post /events": { scope: "write", namespaced: "refused", request: (t) => ({ path: "/events", body: { type: "nobody.listens", eventId: `e-${t.caller}` } }) },
  "post /webhooks/:name": {
    scope: "public",
    namespaced: "allowed",
    request: (t) => {
      const body = { run: "a/r-hook", delivery: `d-${t.caller}` };
      return { path: "/webhooks/hook", body, headers: signed(body) };
    },
  },
  "get /workers": { scope: "read", namespaced: "allowed", request: () => ({ path: "/workers" }) },
  "get /schedules": { scope: "read", namespaced: "refused", request: () => ({ path: "/schedules" }) },
  "get /versions": { scope: "read", namespaced: "refused", request: () => ({ path: "/versions" }) },
  "post /schedules/:name/pause": { scope: "admin", namespaced: "refused", request: () => ({ path: "/schedules/nightly/pause", body: {} }), unknownId: true },
  "post /schedules/:name/resume": { scope: "admin", namespaced: "refused", request: () => ({ path: "/schedules/nightly/resume", body: {} }), unknownId: true },
  "post /versions/retire": { scope: "admin", namespaced: "refused", request: () => ({ path: "/versions/retire", body: { workflow: "gone", version: "9" } }) },
  "post /versions/reinstate": {
    scope: "admin",
    namespaced: "refused",
    request: () => ({ path: "/versions/reinstate", body: { workflow: "gone", version: "9" } }),
  },
  "get /overview": { scope: "read", namespaced: "allowed", request: () => ({ path: "/overview" }) },
  "get /costs": { scope: "read", namespaced: "allowed", request: () => ({ path: "/costs" }) },
  "get /queues": { scope: "read", namespaced: "refused", request: () => ({ path: "/queues" }) },
  "get /outbox": { scope: "admin", namespaced: "refused", request: () => ({ path: "/outbox" }) },
  "post /outbox/:id/retry": { scope: "admin", namespaced: "refused", request: () => ({ path: `/outbox/${enc("a/x:y#0")}/retry` }), unknownId: true },
  "get /alerts": { scope: "read", namespaced: "refused", request: () => ({ path: "/alerts" }) },
  "get /alerts/rules": { scope: "admin", namespaced: "refused", request: () => ({ path: "/alerts/rules" }) },
  "post /alerts/rules": {
    scope: "admin",
    namespaced: "refused",
    request: () => ({ path: "/alerts/rules", body: { rules: [{ name: "daily", kind: "spendPerDay", threshold: 50 }] } }),
  },
  "get /health": { scope: "public", namespaced: "allowed", request: () => ({ path: "/health" }) },
  "get /metrics": { scope: "read", namespaced: "refused", request: () => ({ path: "/metrics" }) },
  "get /openapi.json": { scope: "public", namespaced: "allowed", request: () => ({ path: "/openapi.json" }) },
};

/** The callers: no token, one token per single scope, and the same three with namespace "a". */
const CALLERS: { name: string; scopes: TokenScope[] | null; namespace: string | null }[] = [
  { name: "none", scopes: null, namespace: null },
  { name: "read", scopes: ["read"], namespace: null },
  { name: "write", scopes: ["write"], namespace: null },
  { name: "admin", scopes: ["admin"], namespace: null },
  { name: "ns-read", scopes: ["read"], namespace: "a" },
  { name: "ns-write", scopes: ["write"], namespace: "a" },
  // issueToken refuses a namespaced admin; a record that says so anyway (written by hand, or by an
  // older version) must not get admin power: it acts as a namespaced read+write token.
  { name: "ns-admin", scopes: ["read", "write", "admin"], namespace: "a" },
];

async function setup() {
  const engine = await testEngine("sqlite", { workflows: TEST_WORKFLOWS });
  const app = createServer(engine, {
    auth: "tokens",
    webhooks: { hook: { secret: WEBHOOK_SECRET, runId: (b: any) => b.run, type: "go", eventId: (b: any) => b.delivery } },
  });
  // A question in each namespace, asked by a worker that then stops; every other run stays pending.
  const worker = engine.startWorker({ pollInterval: 10 });
  onCleanup(() => worker.stop());
  for (const ns of ["a", "b"]) await engine.start("ask", null, { runId: `${ns}/ask` });
  await waitFor(async () => (await engine.listHumanRequests({ status: "pending" })).length === 2);
  await worker.stop();
  for (const ns of ["a", "b"])
    for (const caller of [...CALLERS.map((c) => c.name), "hook"]) await engine.start("paced", { steps: 1 }, { runId: `${ns}/r-${caller}` });
  const exported = await engine.exportRun("a/r-hook", { force: true });
  const tokens = new Map<string, string>();
  for (const caller of CALLERS) {
    if (caller.scopes === null) continue;
    if (caller.scopes.includes("admin") && caller.namespace !== null)
      tokens.set(caller.name, await forgeToken(engine, caller.name, caller.scopes, caller.namespace));
    else tokens.set(caller.name, (await issueToken(engine.store, { name: caller.name, scopes: caller.scopes, namespace: caller.namespace }, Date.now())).token);
  }
  const call = async (caller: string, method: string, req: Req) => {
    const token = tokens.get(caller);
    const res = await app.request(req.path, {
      method: method.toUpperCase(),
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(req.body === undefined ? {} : { "content-type": "application/json" }),
        ...req.headers,
      },
      ...(req.body === undefined ? {} : { body: JSON.stringify(req.body) }),
    });
    // A stream of a pending run never ends: its status is all this test needs.
    const code = res.status >= 400 ? ((await res.json()) as { error: { code: string } }).error.code : (await res.body?.cancel(), "");
    return { status: res.status, code };
  };
  return { app, call, exported };
}

/** A token record with the admin scope and a namespace, which issueToken would refuse. */
async function forgeToken(engine: Engine, name: string, scopes: TokenScope[], namespace: string): Promise<string> {
  const id = "f0f0f0f0f0f0f0f0";
  const secret = "S".repeat(43);
  await engine.store.createToken({ id, name, hash: hashSecret(secret), scopes, namespace, createdAt: Date.now(), revokedAt: null, expiresAt: null });
  return `cairn_${id}_${secret}`;
}

/** The status class a caller should get: 401, 403, 404 (a foreign run), or "ok" (2xx, or a 4xx that is not about auth). */
function expected(rule: Rule, caller: (typeof CALLERS)[number], ns: "a" | "b"): 401 | 403 | 404 | "ok" {
  if (rule.scope === "public") return "ok";
  if (caller.scopes === null) return 401;
  const scopes = caller.namespace === null ? caller.scopes : caller.scopes.filter((s) => s !== "admin");
  if (!scopes.includes(rule.scope)) return 403;
  if (caller.namespace === null) return "ok";
  if (rule.namespaced === "refused") return 403;
  if (rule.namespaced === "own-runs" && ns !== caller.namespace) return 404;
  return "ok";
}

/** Answers that are not about auth. 404 is not among them: every run and request a rule names exists (but see `unknownId`). */
const NOT_AUTH = new Set([200, 201, 202, 400, 409, 422, 504]);

describe("auth matrix", () => {
  it("every route has an auth rule, and the rules cover exactly the routes the app serves", async () => {
    const engine = await testEngine("memory", { workflows: TEST_WORKFLOWS });
    const served = createServer(engine, { auth: "tokens" })
      .routes.filter((r) => r.method !== "ALL")
      .map((r) => `${r.method.toLowerCase()} ${r.path}`);
    const documented = ROUTES.map((r) => `${r.method} ${r.path}`);
    expect(new Set(documented)).toEqual(new Set(served));
    const missing = documented.filter((key) => !(key in RULES));
    expect(missing, "routes without an auth rule in auth-matrix.test.ts").toEqual([]);
    expect(Object.keys(RULES).sort()).toEqual([...documented].sort());
  });

  it("every route answers every caller as its rule says", { timeout: 60_000 }, async () => {
    const { call, exported } = await setup();
    const rows: string[] = [];
    const wrong: string[] = [];
    for (const route of ROUTES) {
      const key = `${route.method} ${route.path}`;
      const rule = RULES[key]!;
      for (const caller of CALLERS) {
        // Namespaced callers are also aimed at namespace "b" on routes that name a run.
        const aims: ("a" | "b")[] = rule.namespaced === "own-runs" && caller.namespace !== null ? ["a", "b"] : ["a"];
        for (const ns of aims) {
          const want = expected(rule, caller, ns);
          const got = await call(caller.name, route.method, rule.request({ caller: caller.name, ns, exported }));
          const ok =
            want === "ok"
              ? NOT_AUTH.has(got.status) || (got.status === 404 && rule.unknownId === true)
              : got.status === want &&
                got.code ===
                  (want === 401 ? "UNAUTHORIZED" : want === 403 ? "FORBIDDEN" : route.path.startsWith("/human") ? "HUMAN_REQUEST_NOT_FOUND" : "RUN_NOT_FOUND");
          const line = `${key} as ${caller.name} on ${ns}/: want ${want}, got ${got.status} ${got.code}`;
          rows.push(line);
          if (!ok) wrong.push(line);
        }
      }
    }
    expect(wrong).toEqual([]);
    // Every caller was tried on every route, and "ok" answers were not all refusals in disguise.
    expect(rows.length).toBeGreaterThanOrEqual(ROUTES.length * CALLERS.length);
    expect(rows.filter((r) => / got 2\d\d /.test(r)).length).toBeGreaterThan(ROUTES.length);
  });
});

describe("namespaced tokens on /stuck-runs and fork", () => {
  async function tokens() {
    const engine = await testEngine("sqlite", { workflows: TEST_WORKFLOWS });
    const app = createServer(engine, { auth: "tokens" });
    const teamA = (await issueToken(engine.store, { name: "team-a", scopes: ["read", "write"], namespace: "a" }, Date.now())).token;
    const ops = (await issueToken(engine.store, { name: "ops", scopes: ["read", "write"] }, Date.now())).token;
    const call = async (token: string, method: string, path: string, body?: unknown) => {
      const res = await app.request(path, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: res.status, body: (await res.json()) as any };
    };
    return { engine, teamA, ops, call };
  }

  it("GET /stuck-runs shows a namespaced token only its own stuck runs, a full page of them even behind many foreign ones", async () => {
    const { engine, teamA, ops, call } = await tokens();
    // No worker: every pending run is stuck with graceMs=0. Foreign runs come first in the store.
    for (let i = 0; i < 6; i++) await engine.start("paced", { steps: 1 }, { runId: `b/stuck-${i}` });
    for (let i = 0; i < 3; i++) await engine.start("paced", { steps: 1 }, { runId: `a/stuck-${i}` });
    await engine.start("paced", { steps: 1 }, { runId: "a_not-a-namespace" });
    const ids = async (token: string, query: string) =>
      ((await call(token, "GET", `/stuck-runs?graceMs=0${query}`)).body.runs as any[]).map((r) => r.runId).sort();
    expect(await ids(teamA, "")).toEqual(["a/stuck-0", "a/stuck-1", "a/stuck-2"]);
    expect(await ids(teamA, "&limit=2")).toHaveLength(2);
    expect((await ids(teamA, "&limit=2")).every((id: string) => id.startsWith("a/"))).toBe(true);
    expect(await ids(ops, "")).toHaveLength(10);
  });

  it("a namespaced token forks only its own runs, only into its namespace", async () => {
    const { engine, teamA, call } = await tokens();
    await engine.start("paced", { steps: 1 }, { runId: "a/src" });
    await engine.start("paced", { steps: 1 }, { runId: "b/src" });
    const generated = await call(teamA, "POST", "/runs/a%2Fsrc/fork", { atSeq: 1 });
    expect(generated.status).toBe(201);
    expect(generated.body.run.runId).toMatch(/^a\/[0-9a-f-]{36}$/);
    const named = await call(teamA, "POST", "/runs/a%2Fsrc/fork", { atSeq: 1, runId: "a/fork-1" });
    expect([named.status, named.body.run.runId]).toEqual([201, "a/fork-1"]);
    const outside = await call(teamA, "POST", "/runs/a%2Fsrc/fork", { atSeq: 1, runId: "b/fork-1" });
    expect([outside.status, outside.body.error.code]).toEqual([403, "FORBIDDEN"]);
    const foreign = await call(teamA, "POST", "/runs/b%2Fsrc/fork", { atSeq: 1, runId: "a/fork-2" });
    expect([foreign.status, foreign.body.error.code]).toEqual([404, "RUN_NOT_FOUND"]);
    // Nothing was created by the refused forks.
    expect((await engine.listRuns({ limit: 100 })).runs.map((r) => r.runId).filter((id) => id.includes("fork"))).toEqual(["a/fork-1"]);
  });
});
