import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { testEngine } from "../../test/support/engines.js";
import { TEST_WORKFLOWS } from "../../test/support/server.js";
import { createServer } from "./create-server.js";
import { waitFor } from "../testing/wait-for.js";
import { taggedJson } from "../../test/support/tagged-json.js";

/** Odd run ids: empty, whitespace, control characters, slashes, unicode, very long, percent-encoding. */
const oddId = fc.oneof(
  fc.constantFrom(
    "",
    " ",
    "\t",
    "a b",
    "..",
    "../etc/passwd",
    "%",
    "%zz",
    "r",
    "ghost",
    "q:review#0",
    "q:review#0",
    "q:review#0",
    "a/b/c",
    "é€😀",
    "x".repeat(2000),
    "\u0000",
  ),
  fc.string({ maxLength: 40 }),
);

/** Malformed bodies: bad JSON, wrong types, deep nesting, huge strings and numbers. */
const badBody = fc.oneof(
  fc.constantFrom("", "{", "}", "[", "null", "true", "1e999", "-0", '"x"', "{workflow:}", '{"a":', "\u0000", "[".repeat(3000) + "]".repeat(3000)),
  fc.string({ maxLength: 80 }),
  fc.json({ maxDepth: 6 }),
  fc.jsonValue({ maxDepth: 4 }).map((value) => JSON.stringify({ workflow: value, input: value, runId: value, type: value, action: value, reason: value })),
  // A valid answer shape whose value is nested far too deep to store.
  fc.integer({ min: 2000, max: 6000 }).map((depth) => `{"action":"answer","option":"approve","value":${"[".repeat(depth)}${"]".repeat(depth)}}`),
  fc.record({ workflow: fc.constantFrom("paced", "nope"), input: fc.jsonValue({ maxDepth: 3 }), extra: fc.anything() }).map((v) => {
    try {
      return JSON.stringify(v);
    } catch {
      return "{";
    }
  }),
);

const query = fc.oneof(
  fc.constant(""),
  fc.constantFrom(
    "?limit=0",
    "?limit=-1",
    "?limit=1e9",
    "?limit=abc",
    "?status=,,,",
    "?after=-5",
    "?after=NaN",
    "?cursor=%%%",
    "?createdAfter=x",
    "?staleAfterMs=1e400",
  ),
  fc.string({ maxLength: 30 }).map((s) => `?${encodeURIComponent(s)}=${encodeURIComponent(s)}`),
);

const request = fc.record({
  method: fc.constantFrom("GET", "POST", "PUT", "DELETE", "PATCH"),
  path: fc.oneof(
    fc.constantFrom("/runs", "/stuck-runs", "/human-requests", "/workers", "/health", "/openapi.json", "/metrics", "/audit", "/tokens", "/nothing"),
    oddId.map((id) => `/runs/${encodeURIComponent(id)}`),
    fc.tuple(oddId, fc.constantFrom("journal", "events", "cancel", "retry", "fork")).map(([id, what]) => `/runs/${encodeURIComponent(id)}/${what}`),
    oddId.map((id) => `/human-requests/${encodeURIComponent(id)}/answer`),
    oddId.map((id) => `/webhooks/${encodeURIComponent(id)}`),
  ),
  query,
  body: fc.option(badBody, { nil: undefined }),
  contentType: fc.constantFrom(undefined, "application/json", "text/plain", "application/x-www-form-urlencoded"),
});

describe("a seeded fuzz of malformed requests", () => {
  it("never answers 5xx, never crashes, always answers JSON errors, and changes nothing", async () => {
    const engine = await testEngine("sqlite", { workflows: TEST_WORKFLOWS });
    await engine.start("paced", { steps: 1 }, { runId: "r" });
    // A run with a pending question, so answer bodies reach a real request.
    const worker = engine.startWorker({ pollInterval: 10 });
    await engine.start("ask", null, { runId: "q" });
    await waitFor(async () => (await engine.getRun("q")).status === "suspended" && (await engine.listHumanRequests({ runId: "q" })).length === 1);
    await worker.stop();
    const app = createServer(engine, { bodyLimitBytes: 16 * 1024 });
    const snapshot = async () =>
      JSON.stringify([
        (await engine.listRuns({ limit: 1000 })).runs.map((run) => [run.runId, run.status]),
        await engine.journal("r"),
        await engine.store.listInbox("r"),
        await engine.journal("q"),
        await engine.store.listInbox("q"),
        await engine.listHumanRequests({ runId: "q" }),
      ]);
    const before = await snapshot();
    let requests = 0;
    await fc.assert(
      fc.asyncProperty(request, async ({ method, path, query: q, body, contentType }) => {
        // Malformed requests only: a well-formed start of a known workflow would (rightly) change state.
        fc.pre(!(method === "POST" && path === "/runs" && body !== undefined && /"workflow":"paced"/.test(body) && !/"extra"/.test(body)));
        requests += 1;
        const headers: Record<string, string> = contentType ? { "content-type": contentType } : {};
        const res = await app.request(`${path}${q}`, { method, ...(body === undefined || method === "GET" ? {} : { body }), headers });
        expect(res.status, `${method} ${path}${q}`).toBeLessThan(500);
        if (res.status >= 400) {
          const json = (await res.json()) as { error?: { code?: unknown; message?: unknown } };
          expect(typeof json.error?.code, `${method} ${path}${q} → ${res.status}`).toBe("string");
          expect(typeof json.error?.message).toBe("string");
        } else {
          await res.arrayBuffer();
        }
      }),
      { seed: 20261122, numRuns: 2500 },
    );
    expect(requests).toBeGreaterThan(2000);
    expect(await snapshot()).toBe(before);
  }, 120_000);
});

describe("a seeded fuzz of well-formed writes carrying forged codec tags and control characters", () => {
  it("answers, events and starts never get a 5xx, and every listing stays readable", async () => {
    const engine = await testEngine("sqlite", { workflows: TEST_WORKFLOWS });
    const worker = engine.startWorker({ pollInterval: 10 });
    const app = createServer(engine);
    const post = (path: string, body: unknown) =>
      app.request(path, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    const listings = async () => {
      for (const path of ["/runs?limit=1000", "/human-requests", "/human-requests?status=answered", "/runs/r/journal"]) {
        const res = await app.request(path);
        expect(res.status, path).toBe(200);
        await res.arrayBuffer();
      }
    };
    await engine.start("paced", { steps: 1000 }, { runId: "r" });
    let n = 0;
    await fc.assert(
      fc.asyncProperty(taggedJson, fc.constantFrom("\u001b[2J", "\u0007", "\u0000", "ok"), async (value, noise) => {
        n += 1;
        expect((await post("/runs", { workflow: "paced", input: { steps: 1, value, noise }, runId: `f-${n}` })).status).toBeLessThan(500);
        expect((await post("/runs/r/events", { type: "go", payload: { value, noise } })).status).toBeLessThan(500);
        await engine.start("ask", null, { runId: `q-${n}` });
        const requestId = await waitFor(async () => (await engine.listHumanRequests({ runId: `q-${n}`, status: "pending" }))[0]?.requestId);
        const answered = await post(`/human-requests/${encodeURIComponent(requestId)}/answer`, { action: "answer", option: "approve", value, message: noise });
        expect(answered.status).toBe(200);
        await listings();
      }),
      { seed: 15, numRuns: 25 },
    );
    await waitFor(async () => (await engine.listRuns({ workflow: "ask", status: "completed", limit: 1000 })).runs.length === n);
    await listings();
    await worker.stop();
  }, 120_000);
});
