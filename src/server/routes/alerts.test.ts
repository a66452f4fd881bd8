import { describe, expect, it } from "vitest";
import { testEngine } from "../../../test/support/engines.js";
import { testServer } from "../../../test/support/server.js";
import { CairnClient } from "../../client/client.js";
import { alertListSchema, alertRulesResponse } from "../../core/alert-schemas.js";
import { defineWorkflow } from "../../engine/define-workflow.js";
import { waitFor } from "../../testing/wait-for.js";
import { evaluateAlerts } from "../alerts/evaluator.js";
import { issueToken } from "../auth/tokens.js";

const spender = defineWorkflow({
  name: "spender",
  async run(ctx) {
    await ctx.step("model", () => ({ usage: { inputTokens: 1, outputTokens: 1 }, costMicros: 7_500_000 }));
  },
});

const RULES = { rules: [{ name: "costly-run", kind: "spendPerRun", threshold: 5, description: "<b>page</b> the on-call" }] };

describe("the alert routes", () => {
  it("the rules are admin only: readers and writers get 403 and nothing changes; alerts are read scope, not for namespaced tokens", async () => {
    const engine = await testEngine("sqlite", { workflows: [spender] });
    const server = await testServer(engine, { auth: "tokens" });
    const now = Date.now();
    const reader = (await issueToken(engine.store, { name: "viewer", scopes: ["read"] }, now)).token;
    const writer = (await issueToken(engine.store, { name: "writer", scopes: ["read", "write"] }, now)).token;
    const namespaced = (await issueToken(engine.store, { name: "team-a", scopes: ["read"], namespace: "a" }, now)).token;
    expect((await fetch(`${server.url}/alerts`, { headers: { authorization: `Bearer ${namespaced}` } })).status).toBe(403);
    const overview = await fetch(`${server.url}/overview`, { headers: { authorization: `Bearer ${namespaced}` } });
    expect(((await overview.json()) as { alerts: unknown }).alerts).toBeNull();
    for (const token of [reader, writer]) {
      const headers = { authorization: `Bearer ${token}` };
      expect((await fetch(`${server.url}/alerts`, { headers })).status).toBe(200);
      expect(((await (await fetch(`${server.url}/overview`, { headers })).json()) as { alerts: unknown }).alerts).toEqual([]);
      expect((await fetch(`${server.url}/alerts/rules`, { headers })).status).toBe(403);
      const put = await fetch(`${server.url}/alerts/rules`, {
        method: "POST",
        headers: { ...headers, "content-type": "application/json" },
        body: JSON.stringify(RULES),
      });
      expect(put.status).toBe(403);
    }
    expect((await fetch(`${server.url}/alerts`)).status).toBe(401);
    expect(await engine.store.listAudit({ action: "alerts.rules.set", limit: 10 })).toEqual([]);
  });

  it("setting rules checks Origin and Content-Type, names a bad field, and is audited; the alerts list shows what fired", async () => {
    const engine = await testEngine("sqlite", { workflows: [spender] });
    const server = await testServer(engine, { auth: "tokens" });
    const admin = (await issueToken(engine.store, { name: "root", scopes: ["read", "admin"] }, Date.now())).token;
    const post = (body: string, headers: Record<string, string> = {}) =>
      fetch(`${server.url}/alerts/rules`, {
        method: "POST",
        headers: { authorization: `Bearer ${admin}`, "content-type": "application/json", ...headers },
        body,
      });

    const crossSite = await post(JSON.stringify(RULES), { origin: "https://evil.example" });
    expect([crossSite.status, ((await crossSite.json()) as { error: { code: string } }).error.code]).toEqual([403, "CROSS_ORIGIN_REFUSED"]);
    const text = await post(JSON.stringify(RULES), { "content-type": "text/plain" });
    expect(text.status).toBe(415);
    const bad = await post(
      JSON.stringify({
        rules: [
          { name: "x", kind: "spendPerRun", threshold: -1 },
          { name: "y", kind: "costs", threshold: 1 },
        ],
      }),
    );
    expect(bad.status).toBe(400);
    const message = ((await bad.json()) as { error: { message: string } }).error.message;
    expect(message).toContain("rules.0.threshold: must be an amount in US dollars above 0");
    expect(message).toContain("rules.1.kind");
    expect(message).toContain("spendPerRun, spendPerWorkflow, spendPerDay, failureRate, stuckRuns, humanWaiting");
    expect(await engine.store.listAudit({ action: "alerts.rules.set", limit: 10 })).toEqual([]);

    const client = new CairnClient({ baseUrl: server.url, headers: { authorization: `Bearer ${admin}` } });
    expect(await client.getAlertRules()).toEqual({ rules: [], updatedAt: null, updatedBy: null, source: null });
    const set = alertRulesResponse.parse(await client.setAlertRules(RULES.rules as never));
    expect(set).toMatchObject({ updatedBy: "token:root", rules: [{ name: "costly-run", kind: "spendPerRun", threshold: 5, window: 86_400_000 }] });
    expect(await client.getAlertRules()).toEqual(set);
    const audited = await engine.store.listAudit({ action: "alerts.rules.set", limit: 10 });
    expect(audited).toMatchObject([{ actor: "token:root", target: "alerts.rules" }]);

    // A run over the limit; one evaluation (with the stored rules) fires one alert, listed with its delivery status.
    const worker = engine.startWorker({ pollInterval: 10 });
    await (await engine.start(spender, {}, { runId: "big-spender" })).result();
    await worker.stop();
    expect((await evaluateAlerts(engine.store, { now: Date.now(), evaluatorId: "t" })).fired).toHaveLength(1);
    const listed = alertListSchema.parse(await (await fetch(`${server.url}/alerts`, { headers: { authorization: `Bearer ${admin}` } })).json());
    expect(listed.alerts).toMatchObject([
      {
        alertId: "costly-run/run/big-spender",
        rule: "costly-run",
        kind: "spendPerRun",
        value: 7_500_000,
        runIds: ["big-spender"],
        description: "<b>page</b> the on-call",
        runId: "cairn.alert/costly-run/run/big-spender",
        messageId: "cairn.alert/costly-run/run/big-spender:alert#0",
        delivery: "pending",
      },
    ]);
    const overview = (await (await fetch(`${server.url}/overview`, { headers: { authorization: `Bearer ${admin}` } })).json()) as { alerts: unknown };
    expect(overview.alerts).toEqual(listed.alerts);
    expect(await client.listAlerts({ rule: "other" })).toEqual([]);
    expect(await client.listAlerts({ rule: "costly-run", limit: 1 })).toHaveLength(1);
    const badQuery = await fetch(`${server.url}/alerts?limit=0`, { headers: { authorization: `Bearer ${admin}` } });
    expect(badQuery.status).toBe(400);

    // An empty set removes every rule.
    await client.setAlertRules([]);
    await waitFor(async () => (await client.getAlertRules()).rules.length === 0, { what: "the rules to be cleared" });
    expect(await engine.store.listAudit({ action: "alerts.rules.set", limit: 10 })).toHaveLength(2);
  });
});
