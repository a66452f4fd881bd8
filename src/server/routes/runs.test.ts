import { describe, expect, it } from "vitest";
import { onCleanup, testEngine } from "../../../test/support/engines.js";
import { flakyState, paced, TEST_WORKFLOWS } from "../../../test/support/server.js";
import type { Engine } from "../../engine/engine.js";
import { waitFor } from "../../testing/wait-for.js";
import { createServer } from "../create-server.js";

async function setup(withWorker = true) {
  const engine = await testEngine("sqlite", { workflows: TEST_WORKFLOWS });
  if (withWorker) {
    const worker = engine.startWorker({ pollInterval: 10 });
    onCleanup(() => worker.stop());
  }
  const app = createServer(engine);
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await app.request(path, {
      method,
      ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body), headers: { "content-type": "application/json" } }),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  return { engine, app, call };
}

const runStatus = (engine: Engine, runId: string) => engine.getRun(runId).then((r) => r.status);

describe("POST /runs", () => {
  it("creates (201), returns the same run for the same input (200), refuses another input (409)", async () => {
    const { call } = await setup(false);
    const first = await call("POST", "/runs", { workflow: "paced", input: { steps: 1 }, runId: "r1" });
    expect(first.status).toBe(201);
    expect(first.body.created).toBe(true);
    expect(first.body.run).toMatchObject({ runId: "r1", workflow: "paced", status: "pending", input: { steps: 1 } });
    expect(first.body.run.createdAt).toMatch(/^\d{4}-\d\d-\d\dT/);
    const again = await call("POST", "/runs", { workflow: "paced", input: { steps: 1 }, runId: "r1" });
    expect(again.status).toBe(200);
    expect(again.body.created).toBe(false);
    const other = await call("POST", "/runs", { workflow: "paced", input: { steps: 2 }, runId: "r1" });
    expect(other.status).toBe(409);
    expect(other.body.error.code).toBe("RUN_CONFLICT");
  });

  it("generates a run id, and refuses an unknown workflow with 422", async () => {
    const { call } = await setup(false);
    const made = await call("POST", "/runs", { workflow: "ask" });
    expect(made.status).toBe(201);
    expect(made.body.run.runId).toMatch(/[0-9a-f-]{36}/);
    const unknown = await call("POST", "/runs", { workflow: "nope" });
    expect(unknown.status).toBe(422);
    expect(unknown.body.error.code).toBe("WORKFLOW_NOT_REGISTERED");
  });
});

describe("GET /runs", () => {
  it("filters by status and workflow, pages with a cursor", async () => {
    const { engine, call } = await setup(false);
    for (let i = 0; i < 5; i++) await engine.start(paced, { steps: i }, { runId: `p${i}` });
    await engine.start("ask", null, { runId: "a0" });
    await engine.cancel("p0");
    expect((await call("GET", "/runs")).body.runs).toHaveLength(6);
    expect((await call("GET", "/runs?workflow=ask")).body.runs.map((r: any) => r.runId)).toEqual(["a0"]);
    expect((await call("GET", "/runs?status=cancelled")).body.runs.map((r: any) => r.runId)).toEqual(["p0"]);
    expect((await call("GET", "/runs?status=pending,cancelled")).body.runs).toHaveLength(6);
    const page1 = await call("GET", "/runs?limit=4");
    expect(page1.body.runs).toHaveLength(4);
    const page2 = await call("GET", `/runs?limit=4&cursor=${page1.body.nextCursor}`);
    expect(page2.body.runs).toHaveLength(2);
    expect(page2.body.nextCursor).toBeUndefined();
    const future = new Date(Date.now() + 60_000).toISOString();
    expect((await call("GET", `/runs?createdAfter=${future}`)).body.runs).toHaveLength(0);
    expect((await call("GET", `/runs?createdBefore=${Date.now() + 60_000}`)).body.runs).toHaveLength(6);
  });
});

describe("GET /runs?q=", () => {
  it("filters by text in the run id, workflow or error message, with the other filters; an over-long q is 400", async () => {
    const { engine, call } = await setup();
    flakyState.healed = false;
    await engine.start(paced, { steps: 1 }, { runId: "order-1" });
    await engine.start("ask", null, { runId: "Order-2" });
    await engine.start("flaky", null, { runId: "f1" });
    await waitFor(() => runStatus(engine, "f1").then((s) => s === "failed"), { timeoutMs: 5000 });
    const ids = async (query: string) => (await call("GET", `/runs?${query}`)).body.runs.map((r: any) => r.runId).sort();
    expect(await ids("q=ORDER")).toEqual(["Order-2", "order-1"]);
    expect(await ids("q=ORDER&workflow=ask")).toEqual(["Order-2"]);
    expect(await ids("q=fla")).toEqual(["f1"]);
    expect(await ids("q=NOT%20YET"), "the error message").toEqual(["f1"]);
    expect(await ids("q=%25")).toEqual([]);
    expect((await call("GET", `/runs?q=${"x".repeat(201)}`)).status).toBe(400);
  });
});

describe("a run through the API", () => {
  it("get, journal pages, events (idempotent), completion, then 409 for events on the finished run", async () => {
    const { engine, call } = await setup();
    await call("POST", "/runs", { workflow: "paced", input: { steps: 2 }, runId: "walk" });
    await waitFor(async () => (await runStatus(engine, "walk")) === "suspended");
    const sent = await call("POST", "/runs/walk/events", { type: "go", eventId: "go-1" });
    expect(sent).toEqual({ status: 202, body: { eventId: "go-1", duplicate: false } });
    const dup = await call("POST", "/runs/walk/events", { type: "go", eventId: "go-1" });
    expect(dup).toEqual({ status: 200, body: { eventId: "go-1", duplicate: true } });
    await call("POST", "/runs/walk/events", { type: "go", eventId: "go-2" });
    await waitFor(async () => (await runStatus(engine, "walk")) === "completed");
    const run = await call("GET", "/runs/walk");
    expect(run.body).toMatchObject({ status: "completed", output: [0, 1] });
    const all = await call("GET", "/runs/walk/journal");
    expect(all.body.entries.map((e: any) => e.seq)).toEqual(Array.from({ length: run.body.entries }, (_, i) => i + 1));
    const page = await call("GET", "/runs/walk/journal?after=2&limit=3");
    expect(page.body.entries.map((e: any) => e.seq)).toEqual([3, 4, 5]);
    expect(page.body.nextAfter).toBe(5);
    const late = await call("POST", "/runs/walk/events", { type: "go" });
    expect(late.status).toBe(409);
    expect(late.body.error.code).toBe("RUN_FINISHED");
  });

  it("cancel: 200, then 409; retry: 409 unless failed, then 200", async () => {
    const { engine, call } = await setup();
    await call("POST", "/runs", { workflow: "paced", input: { steps: 3 }, runId: "c" });
    const cancelled = await call("POST", "/runs/c/cancel", { reason: "enough" });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.status).toBe("cancelled");
    expect((await call("POST", "/runs/c/cancel")).body.error.code).toBe("RUN_FINISHED");
    expect((await call("POST", "/runs/c/retry")).status).toBe(409);

    flakyState.healed = false;
    await call("POST", "/runs", { workflow: "flaky", runId: "f" });
    await waitFor(async () => (await runStatus(engine, "f")) === "failed");
    flakyState.healed = true;
    const retried = await call("POST", "/runs/f/retry");
    expect(retried.status).toBe(200);
    expect(retried.body.status).toBe("pending");
    await waitFor(async () => (await runStatus(engine, "f")) === "completed");
  });

  it("unknown runs are 404 on every run route", async () => {
    const { call } = await setup(false);
    for (const [method, path] of [
      ["GET", "/runs/ghost"],
      ["GET", "/runs/ghost/journal"],
      ["GET", "/runs/ghost/stream"],
      ["POST", "/runs/ghost/events"],
      ["POST", "/runs/ghost/cancel"],
      ["POST", "/runs/ghost/retry"],
    ] as const) {
      const res = await call(method, path, method === "POST" && path.endsWith("events") ? { type: "go" } : undefined);
      expect([method, path, res.status, res.body.error.code]).toEqual([method, path, 404, "RUN_NOT_FOUND"]);
    }
  });

  it("GET /stuck-runs lists nothing on a healthy store", async () => {
    const { call } = await setup(false);
    expect(await call("GET", "/stuck-runs?graceMs=1000")).toEqual({ status: 200, body: { runs: [] } });
  });

  it("a run named stuck is read with GET /runs/stuck like any other", async () => {
    const { call } = await setup(false);
    expect((await call("POST", "/runs", { workflow: "paced", input: { steps: 1 }, runId: "stuck" })).status).toBe(201);
    const res = await call("GET", "/runs/stuck");
    expect([res.status, res.body.runId, res.body.workflow]).toEqual([200, "stuck", "paced"]);
  });
});
