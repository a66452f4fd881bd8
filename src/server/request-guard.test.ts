// Cross-site requests and DNS rebinding against a real `cairn serve` child process (SQLite file, no
// auth, the default local mode): hostile Origin, Content-Type and Host headers are refused before
// anything is written; the hosts it listens on, configured hosts and CORS origins pass; every
// response carries the CSP and framing headers.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { rawRequest, spawnServe } from "../../test/support/serve-process.js";

const WORKFLOWS = resolve("test/fixtures/dashboard-workflows.mjs");

async function start(...extra: string[]) {
  const dir = mkdtempSync(join(tmpdir(), "cairn-guard-"));
  const server = await spawnServe(["--store", `sqlite:${join(dir, "cairn.db")}`, "--workflows", WORKFLOWS, "--no-worker", ...extra]);
  const host = `127.0.0.1:${server.port}`;
  const runIds = async () => (await rawRequest(server.port, "GET", "/runs", { host })).json.runs.map((r: { runId: string }) => r.runId);
  return { ...server, host, runIds };
}

const startBody = (runId: string) => JSON.stringify({ workflow: "refund", input: { orderId: "o-1" }, runId });

describe("the default local mode refuses what a web page could send", () => {
  it("a text/plain POST from a foreign Origin is 403, a text/plain one without Origin 415, and nothing is written", async () => {
    const { port, host, runIds } = await start();
    const foreign = await rawRequest(port, "POST", "/runs", { host, origin: "https://evil.example", "content-type": "text/plain" }, startBody("pwned-1"));
    expect([foreign.status, foreign.json.error.code]).toEqual([403, "CROSS_ORIGIN_REFUSED"]);
    expect(foreign.json.error.message).toContain("https://evil.example");
    expect(foreign.json.error.message).toContain("--cors-origin");
    // JSON does not help a foreign page, nor does Origin: null (sandboxed frames, data: URLs).
    const foreignJson = await rawRequest(
      port,
      "POST",
      "/runs",
      { host, origin: "https://evil.example", "content-type": "application/json" },
      startBody("pwned-2"),
    );
    expect(foreignJson.status).toBe(403);
    const nullOrigin = await rawRequest(port, "POST", "/runs", { host, origin: "null", "content-type": "application/json" }, startBody("pwned-3"));
    expect(nullOrigin.status).toBe(403);
    const crossSite = await rawRequest(
      port,
      "POST",
      "/runs",
      { host, "sec-fetch-site": "cross-site", "content-type": "application/json" },
      startBody("pwned-4"),
    );
    expect(crossSite.status).toBe(403);
    const plain = await rawRequest(port, "POST", "/runs", { host, "content-type": "text/plain;charset=UTF-8" }, startBody("pwned-5"));
    expect([plain.status, plain.json.error.code]).toEqual([415, "UNSUPPORTED_MEDIA_TYPE"]);
    expect(plain.json.error.message).toContain("Content-Type: application/json");
    const form = await rawRequest(port, "POST", "/runs", { host, "content-type": "application/x-www-form-urlencoded" }, "workflow=refund");
    expect(form.status).toBe(415);
    const untyped = await rawRequest(port, "POST", "/runs", { host }, startBody("pwned-6"));
    expect(untyped.status).toBe(415);
    expect(await runIds()).toEqual([]);

    // Our own clients: JSON, same origin (the dashboard) or no Origin (CLI, SDK, curl).
    const sameOrigin = await rawRequest(port, "POST", "/runs", { host, origin: `http://${host}`, "content-type": "application/json" }, startBody("ok-1"));
    expect(sameOrigin.status).toBe(201);
    const noOrigin = await rawRequest(port, "POST", "/runs", { host, "content-type": "application/json; charset=utf-8" }, startBody("ok-2"));
    expect(noOrigin.status).toBe(201);
    // A bodiless POST needs no Content-Type.
    const cancel = await rawRequest(port, "POST", "/runs/ok-2/cancel", { host });
    expect(cancel.status).toBe(200);
    expect((await runIds()).sort()).toEqual(["ok-1", "ok-2"]);
  });

  it("answers only to the hosts it listens on: a rebound name is refused on reads (421), loopback names pass", async () => {
    const { port } = await start();
    for (const host of ["attacker.example", `attacker.example:${port}`, `127.0.0.1.nip.io:${port}`]) {
      const res = await rawRequest(port, "GET", "/runs", { host });
      expect([host, res.status, res.json?.error?.code]).toEqual([host, 421, "HOST_NOT_ALLOWED"]);
      expect(res.text).not.toContain('"runs"');
    }
    const rebound = await rawRequest(port, "GET", "/runs", { host: "attacker.example" });
    expect(rebound.json.error.message).toContain("--allowed-host");
    expect((await rawRequest(port, "GET", "/ui/", { host: "attacker.example" })).status).toBe(421);
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `LOCALHOST:${port}`, `[::1]:${port}`]) {
      expect([host, (await rawRequest(port, "GET", "/runs", { host })).status]).toEqual([host, 200]);
    }
  });

  it("--allowed-host adds a name (a proxy's), --cors-origin lets one origin's pages call it", async () => {
    const { port, host, runIds } = await start("--allowed-host", "cairn.internal", "--cors-origin", "https://ops.example");
    expect((await rawRequest(port, "GET", "/runs", { host: "cairn.internal" })).status).toBe(200);
    expect((await rawRequest(port, "GET", "/runs", { host: "other.internal" })).status).toBe(421);
    const preflight = await rawRequest(port, "OPTIONS", "/runs", {
      host,
      origin: "https://ops.example",
      "access-control-request-method": "POST",
      "access-control-request-headers": "content-type",
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers["access-control-allow-origin"]).toBe("https://ops.example");
    const read = await rawRequest(port, "GET", "/runs", { host, origin: "https://ops.example" });
    expect(read.headers["access-control-allow-origin"]).toBe("https://ops.example");
    const stranger = await rawRequest(port, "GET", "/runs", { host, origin: "https://evil.example" });
    expect(stranger.headers["access-control-allow-origin"]).toBeUndefined();
    const strangerPreflight = await rawRequest(port, "OPTIONS", "/runs", { host, origin: "https://evil.example", "access-control-request-method": "POST" });
    expect(strangerPreflight.headers["access-control-allow-origin"]).toBeUndefined();
    const write = await rawRequest(port, "POST", "/runs", { host, origin: "https://ops.example", "content-type": "application/json" }, startBody("from-ops"));
    expect(write.status).toBe(201);
    expect(await runIds()).toEqual(["from-ops"]);
  });

  it("rejects a bad --allowed-host or --cors-origin with a usage error", async () => {
    await expect(start("--cors-origin", "ops.example/path")).rejects.toThrow(/--cors-origin: Not an origin/);
  });

  it("the dashboard and the API send a CSP that forbids framing, no referrer and no sniffing", async () => {
    const { port, host } = await start();
    for (const path of ["/ui/", "/ui/runs/x", "/runs"]) {
      const res = await rawRequest(port, "GET", path, { host });
      expect(res.status).toBe(200);
      expect(res.headers["content-security-policy"]).toContain("frame-ancestors 'none'");
      expect(res.headers["x-frame-options"]).toBe("DENY");
      expect(res.headers["referrer-policy"]).toBe("no-referrer");
      expect(res.headers["x-content-type-options"]).toBe("nosniff");
    }
    const page = await rawRequest(port, "GET", "/ui/", { host });
    const csp = String(page.headers["content-security-policy"]);
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain("unsafe-inline");
    // The built page has no inline script or style the policy would block.
    expect(page.text).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(page.text).not.toMatch(/<style|style="/);
  });
});
