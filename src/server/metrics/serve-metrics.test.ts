import { describe, expect, it } from "vitest";
import { onCleanup, testEngine } from "../../../test/support/engines.js";
import { TEST_WORKFLOWS } from "../../../test/support/server.js";
import { issueToken } from "../auth/tokens.js";
import { serveMetrics } from "./serve-metrics.js";

describe("serveMetrics", () => {
  it("serves GET /metrics only; with token auth a scrape needs a read token without a namespace", async () => {
    const engine = await testEngine("sqlite", { workflows: TEST_WORKFLOWS });
    const server = await serveMetrics(engine, { port: 0, auth: "tokens" });
    onCleanup(() => server.close());
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const token = async (scopes: ("read" | "write" | "admin")[], namespace: string | null = null) =>
      (await issueToken(engine.store, { name: `t-${scopes.join("-")}-${namespace}`, scopes, namespace }, Date.now())).token;
    const scrape = async (bearer?: string, path = "/metrics") => {
      const res = await fetch(`${server.url}${path}`, bearer ? { headers: { authorization: `Bearer ${bearer}` } } : {});
      const text = await res.text();
      return { status: res.status, text };
    };
    expect((await scrape()).status).toBe(401);
    expect((await scrape(await token(["write", "admin"]))).status).toBe(403);
    const namespaced = await scrape(await token(["read"], "a"));
    expect(namespaced.status).toBe(403);
    expect(namespaced.text).toContain("every namespace");
    const reader = await token(["read"]);
    const ok = await scrape(reader);
    expect(ok.status).toBe(200);
    expect(ok.text).toContain("# TYPE cairn_steps_total counter");
    expect((await scrape(reader, "/runs")).status).toBe(404);
  });

  it("refuses a non-loopback host without token auth", async () => {
    const engine = await testEngine("memory", { workflows: TEST_WORKFLOWS });
    await expect(serveMetrics(engine, { host: "0.0.0.0", port: 0 })).rejects.toThrow(/refusing to listen on 0\.0\.0\.0 without authentication/);
  });
});
