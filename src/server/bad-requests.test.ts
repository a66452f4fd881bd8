import { describe, expect, it } from "vitest";
import { onCleanup, testEngine } from "../../test/support/engines.js";
import { waitFor } from "../testing/wait-for.js";
import { TEST_WORKFLOWS } from "../../test/support/server.js";
import { createServer } from "./create-server.js";

const nested = (depth: number) => "[".repeat(depth) + "]".repeat(depth);

/** [name, method, path, body (string = raw), expected status, expected code, headers?] */
const BAD: [string, string, string, string | undefined, number, string, Record<string, string>?][] = [
  ["body not JSON", "POST", "/runs", "{workflow:", 400, "INVALID_INPUT"],
  ["body an array", "POST", "/runs", "[]", 400, "INVALID_INPUT"],
  ["body a string", "POST", "/runs", '"paced"', 400, "INVALID_INPUT"],
  ["body null", "POST", "/runs", "null", 400, "INVALID_INPUT"],
  ["body a huge number", "POST", "/runs", "1e999", 400, "INVALID_INPUT"],
  ["no workflow", "POST", "/runs", "{}", 400, "INVALID_INPUT"],
  ["workflow not a string", "POST", "/runs", '{"workflow":5}', 400, "INVALID_INPUT"],
  ["unknown field", "POST", "/runs", '{"workflow":"paced","inptu":{}}', 400, "INVALID_INPUT"],
  ["runId with a space", "POST", "/runs", '{"workflow":"paced","runId":"a b"}', 400, "INVALID_INPUT"],
  ["runId too long", "POST", "/runs", JSON.stringify({ workflow: "paced", runId: "x".repeat(300) }), 400, "INVALID_INPUT"],
  ["runId empty", "POST", "/runs", '{"workflow":"paced","runId":""}', 400, "INVALID_INPUT"],
  ["unknown workflow, deeply nested input", "POST", "/runs", `{"workflow":"nope","input":${nested(5000)}}`, 422, "WORKFLOW_NOT_REGISTERED"],
  ["deeply nested, unbalanced", "POST", "/runs", nested(5000).slice(1), 400, "INVALID_INPUT"],
  ["limit 0", "GET", "/runs?limit=0", undefined, 400, "INVALID_INPUT"],
  ["limit not a number", "GET", "/runs?limit=ten", undefined, 400, "INVALID_INPUT"],
  ["limit too big", "GET", "/runs?limit=5000", undefined, 400, "INVALID_INPUT"],
  ["limit fractional", "GET", "/runs?limit=1.5", undefined, 400, "INVALID_INPUT"],
  ["limit enormous", "GET", `/runs?limit=${"9".repeat(400)}`, undefined, 400, "INVALID_INPUT"],
  ["unknown status", "GET", "/runs?status=sleeping", undefined, 400, "INVALID_INPUT"],
  ["empty status", "GET", "/runs?status=,", undefined, 400, "INVALID_INPUT"],
  ["bad date", "GET", "/runs?createdAfter=yesterday", undefined, 400, "INVALID_INPUT"],
  ["impossible date", "GET", "/runs?createdBefore=2025-13-45", undefined, 400, "INVALID_INPUT"],
  ["unknown query parameter", "GET", "/runs?stauts=failed", undefined, 400, "INVALID_INPUT"],
  ["forged cursor", "GET", "/runs?cursor=bm90LWEtY3Vyc29y", undefined, 422, "INVALID_INPUT"],
  ["run id with whitespace", "GET", "/runs/a%20b", undefined, 400, "INVALID_INPUT"],
  ["run id too long", "GET", `/runs/${"x".repeat(300)}`, undefined, 400, "INVALID_INPUT"],
  ["run id with a tab in the journal route", "GET", "/runs/a%09b/journal", undefined, 400, "INVALID_INPUT"],
  ["negative after", "GET", "/runs/r/journal?after=-1", undefined, 400, "INVALID_INPUT"],
  ["fractional after", "GET", "/runs/r/journal?after=1.5", undefined, 400, "INVALID_INPUT"],
  ["journal limit 0", "GET", "/runs/r/journal?limit=0", undefined, 400, "INVALID_INPUT"],
  ["stream after not a number", "GET", "/runs/r/stream?after=x", undefined, 400, "INVALID_INPUT"],
  ["stream Last-Event-ID not a seq", "GET", "/runs/r/stream", undefined, 400, "INVALID_INPUT", { "last-event-id": "abc" }],
  ["stream of an unknown run", "GET", "/runs/ghost/stream", undefined, 404, "RUN_NOT_FOUND"],
  ["event without type", "POST", "/runs/r/events", "{}", 400, "INVALID_INPUT"],
  ["event with empty type", "POST", "/runs/r/events", '{"type":""}', 400, "INVALID_INPUT"],
  ["event id a number", "POST", "/runs/r/events", '{"type":"go","eventId":5}', 400, "INVALID_INPUT"],
  ["event body not JSON", "POST", "/runs/r/events", "type=go", 400, "INVALID_INPUT"],
  ["event for an unknown run", "POST", "/runs/ghost/events", '{"type":"go"}', 404, "RUN_NOT_FOUND"],
  ["cancel reason a number", "POST", "/runs/r/cancel", '{"reason":5}', 400, "INVALID_INPUT"],
  ["cancel with unknown field", "POST", "/runs/r/cancel", '{"force":true}', 400, "INVALID_INPUT"],
  ["retry with a body", "POST", "/runs/r/retry", '{"now":true}', 400, "INVALID_INPUT"],
  ["retry a pending run", "POST", "/runs/r/retry", undefined, 409, "RUN_NOT_FAILED"],
  ["answer with unknown action", "POST", "/human-requests/r%3Aask%230/answer", '{"action":"maybe"}', 400, "INVALID_INPUT"],
  ["answer without action", "POST", "/human-requests/r%3Aask%230/answer", "{}", 400, "INVALID_INPUT"],
  ["answer for an unknown request", "POST", "/human-requests/r%3Aask%230/answer", '{"action":"answer","option":"x"}', 404, "HUMAN_REQUEST_NOT_FOUND"],
  [
    "answer for an unknown request, deeply nested value",
    "POST",
    "/human-requests/r%3Aask%230/answer",
    `{"action":"answer","value":${nested(5000)}}`,
    404,
    "HUMAN_REQUEST_NOT_FOUND",
  ],
  ["human requests, unknown status", "GET", "/human-requests?status=open", undefined, 400, "INVALID_INPUT"],
  ["workers, negative staleness", "GET", "/workers?staleAfterMs=-5", undefined, 400, "INVALID_INPUT"],
  ["stuck, bad grace", "GET", "/stuck-runs?graceMs=soon", undefined, 400, "INVALID_INPUT"],
  ["unknown route", "GET", "/nothing-here", undefined, 404, "ROUTE_NOT_FOUND"],
  ["unknown method", "DELETE", "/runs/r", undefined, 404, "ROUTE_NOT_FOUND"],
  ["PUT on runs", "PUT", "/runs", "{}", 404, "ROUTE_NOT_FOUND"],
];

describe("bad requests", () => {
  it.each(BAD)("%s → %s %s answers %i %s, changes nothing", async (_name, method, path, body, status, code, headers) => {
    const engine = await testEngine("sqlite", { workflows: TEST_WORKFLOWS });
    await engine.start("paced", { steps: 1 }, { runId: "r" });
    const before = JSON.stringify([await engine.listRuns(), await engine.journal("r"), await engine.store.listInbox("r")]);
    const app = createServer(engine, { bodyLimitBytes: 64 * 1024 });
    const res = await app.request(path, { method, ...(body === undefined ? {} : { body }), headers: { "content-type": "application/json", ...headers } });
    const json = (await res.json()) as { error: { code: string; message: string } };
    expect([res.status, json.error.code]).toEqual([status, code]);
    expect(json.error.message.length).toBeGreaterThan(10);
    expect(JSON.stringify([await engine.listRuns(), await engine.journal("r"), await engine.store.listInbox("r")])).toBe(before);
  });

  it("an answer whose value is nested 5000 levels deep is 422 INVALID_INPUT, and the request stays pending", async () => {
    const engine = await testEngine("sqlite", { workflows: TEST_WORKFLOWS });
    const worker = engine.startWorker({ pollInterval: 10 });
    onCleanup(() => worker.stop());
    await engine.start("ask", null, { runId: "deep" });
    await waitFor(async () => (await engine.listHumanRequests({ runId: "deep", status: "pending" })).length === 1);
    const app = createServer(engine, { bodyLimitBytes: 64 * 1024 });
    const res = await app.request("/human-requests/deep%3Areview%230/answer", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: `{"action":"answer","option":"approve","value":${nested(5000)}}`,
    });
    const json = (await res.json()) as { error: { code: string; message: string } };
    expect([res.status, json.error.code]).toEqual([422, "INVALID_INPUT"]);
    expect(json.error.message).toContain("cannot be stored");
    expect(await engine.getHumanRequest("deep:review#0")).toMatchObject({ status: "pending", answer: null });
    expect((await engine.store.listInbox("deep")).length).toBe(0);
  });

  it("bodies over the limit get 413, with or without a Content-Length", async () => {
    const engine = await testEngine("memory", { workflows: TEST_WORKFLOWS });
    const app = createServer(engine, { bodyLimitBytes: 1024 });
    const big = JSON.stringify({ workflow: "paced", input: "x".repeat(2000) });
    const declared = await app.request("/runs", {
      method: "POST",
      body: big,
      headers: { "content-type": "application/json", "content-length": String(big.length) },
    });
    expect(declared.status).toBe(413);
    expect(((await declared.json()) as any).error.code).toBe("PAYLOAD_TOO_LARGE");
    const chunks = [big.slice(0, 600), big.slice(600)];
    const streamed = new ReadableStream<Uint8Array>({
      pull(controller) {
        const next = chunks.shift();
        if (next === undefined) controller.close();
        else controller.enqueue(new TextEncoder().encode(next));
      },
    });
    const chunked = await app.request("/runs", { method: "POST", body: streamed, duplex: "half" } as RequestInit);
    expect(chunked.status).toBe(413);
    expect((await engine.listRuns()).runs).toHaveLength(0);
    const small = await app.request("/runs", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ workflow: "paced", input: { steps: 1 } }),
    });
    expect(small.status).toBe(201);
  });

  it("values JSON cannot hold (bigint, Map) still come back as JSON", async () => {
    const engine = await testEngine("memory", { workflows: TEST_WORKFLOWS });
    await engine.start("paced", { steps: 1, big: 10n ** 20n, map: new Map([["a", 1]]) } as any, { runId: "odd" });
    const res = await createServer(engine).request("/runs/odd");
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).input).toEqual({ steps: 1, big: "100000000000000000000", map: { a: 1 } });
  });
});
