import { webhookSignature } from "../engine/webhook-signature.js";
import { describe, expect, it } from "vitest";
import { testEngine } from "../../test/support/engines.js";
import { TEST_WORKFLOWS, testServer } from "../../test/support/server.js";
import { issueToken } from "./auth/tokens.js";
import { ROUTES } from "./openapi.js";

const LIMIT = 1024;
const SECRET = "whsec-limit";

/** A path for each POST route (ids of things that exist, so only the body can be the problem). */
const PATHS: Record<string, string> = {
  "/runs": "/runs",
  "/events": "/events",
  "/runs/:id/events": "/runs/r1/events",
  "/runs/:id/cancel": "/runs/r1/cancel",
  "/runs/:id/retry": "/runs/r1/retry",
  "/runs/:id/fork": "/runs/r1/fork",
  "/runs/:id/requests/:name": "/runs/r1/requests/steer",
  "/runs/import": "/runs/import?as=imported",
  "/human-requests/:id/answer": `/human-requests/${encodeURIComponent("q1:review#0")}/answer`,
  "/tokens": "/tokens",
  "/tokens/:id/revoke": "/tokens/0123456789abcdef/revoke",
  "/webhooks/:name": "/webhooks/hook",
  "/outbox/:id/retry": `/outbox/${encodeURIComponent("r1:x#0")}/retry`,
  "/auth/tickets": "/auth/tickets",
  "/auth/session": "/auth/session",
  "/bulk/cancel": "/bulk/cancel",
  "/bulk/retry": "/bulk/retry",
  "/alerts/rules": "/alerts/rules",
  "/schedules/:name/pause": "/schedules/nightly/pause",
  "/schedules/:name/resume": "/schedules/nightly/resume",
  "/versions/retire": "/versions/retire",
  "/versions/reinstate": "/versions/reinstate",
};

/** A JSON body just over the limit: valid JSON, so only its size can be refused. */
const big = JSON.stringify({ workflow: "paced", input: { pad: "x".repeat(LIMIT) } });

async function setup() {
  const engine = await testEngine("sqlite", { workflows: TEST_WORKFLOWS });
  await engine.start("paced", { steps: 1 }, { runId: "r1" });
  const server = await testServer(engine, {
    auth: "tokens",
    bodyLimitBytes: LIMIT,
    webhooks: { hook: { secret: SECRET, runId: () => "r1", type: "go", eventId: () => "d1" } },
  });
  const { token } = await issueToken(engine.store, { name: "all", scopes: ["read", "write", "admin"] }, Date.now());
  const post = async (path: string, body: string | ReadableStream<Uint8Array>) => {
    const res = await fetch(`${server.url}${path}`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${token}`,
        "content-type": "application/json",
        "cairn-signature": webhookSignature(SECRET, big, Math.floor(Date.now() / 1000)),
      },
      body,
      ...(typeof body === "string" ? {} : { duplex: "half" }),
    } as RequestInit);
    const text = await res.text();
    return { status: res.status, code: (res.headers.get("content-type")?.includes("json") ? JSON.parse(text).error?.code : undefined) as string | undefined };
  };
  return { engine, post };
}

/** The same bytes without a Content-Length: chunks the server must count as it reads. */
function chunked(text: string): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  let at = 0;
  return new ReadableStream({
    pull(controller) {
      if (at >= bytes.length) return controller.close();
      controller.enqueue(bytes.slice(at, (at += 256)));
    },
  });
}

describe("request body limit", () => {
  const posts = ROUTES.filter((r) => r.method === "post");

  it("every POST route has a path here, and those that read a body say 413 in the API description", () => {
    expect(posts.map((r) => r.path).sort()).toEqual(Object.keys(PATHS).sort());
    // Routes that take no body (revoke, outbox retry) ignore one; every other POST reads it.
    expect(posts.filter((r) => !r.errors.includes(413)).map((r) => r.path)).toEqual(["/tokens/:id/revoke", "/outbox/:id/retry"]);
  });

  for (const route of posts.filter((r) => r.errors.includes(413))) {
    it(`POST ${route.path} refuses a body over the limit with 413, with or without Content-Length, and changes nothing`, async () => {
      const { engine, post } = await setup();
      const before = { runs: (await engine.listRuns({ limit: 100 })).runs.length, audit: (await engine.store.listAudit({ limit: 100 })).length };
      for (const body of [big, chunked(big)]) {
        const res = await post(PATHS[route.path]!, body);
        expect([res.status, res.code], typeof body === "string" ? "with Content-Length" : "chunked").toEqual([413, "PAYLOAD_TOO_LARGE"]);
      }
      expect((await engine.listRuns({ limit: 100 })).runs.length).toBe(before.runs);
      expect((await engine.store.listAudit({ limit: 100 })).length).toBe(before.audit);
      expect(await engine.store.listInbox("r1")).toEqual([]);
      expect((await engine.getRun("r1")).status).toBe("pending");
    });
  }

  it("a body just under the limit is read (the limit is not off by a lot)", async () => {
    const { post } = await setup();
    const fits = JSON.stringify({ type: "go", payload: "x".repeat(LIMIT - 40) });
    expect(Buffer.byteLength(fits)).toBeLessThanOrEqual(LIMIT);
    expect((await post("/runs/r1/events", fits)).status).toBe(202);
  });
});
