import { describe, expect, it } from "vitest";
import { onCleanup, testEngine } from "../../../test/support/engines.js";
import { TEST_WORKFLOWS } from "../../../test/support/server.js";
import { waitFor } from "../../testing/wait-for.js";
import { createServer } from "../create-server.js";
import { openApiPath, ROUTES } from "../openapi.js";

describe("system routes", () => {
  it("GET /workers lists the live worker; GET /health answers ok, and 503 once the store is closed", async () => {
    const engine = await testEngine("sqlite", { workflows: TEST_WORKFLOWS });
    const worker = engine.startWorker({ pollInterval: 10, workerId: "w-1" });
    onCleanup(() => worker.stop());
    const app = createServer(engine);
    const workers = await waitFor(async () => {
      const body = (await (await app.request("/workers")).json()) as any;
      return body.workers.length > 0 && body.workers;
    });
    expect(workers[0]).toMatchObject({ workerId: "w-1", workflows: expect.arrayContaining(["paced@1"]) });
    expect(workers[0].heartbeatAt).toMatch(/T/);
    const health = await app.request("/health");
    expect([health.status, await health.json()]).toEqual([200, { status: "ok" }]);
    await worker.stop();
    await engine.store.close();
    const down = await app.request("/health");
    expect(down.status).toBe(503);
    expect(((await down.json()) as any).error.code).toBe("STORE_UNAVAILABLE");
  });

  it("GET /versions counts runs per workflow version and status, and shows drains", async () => {
    const engine = await testEngine("sqlite", { workflows: TEST_WORKFLOWS });
    await engine.start("paced", { steps: 1 }, { runId: "v-1" });
    await engine.drainVersion("paced", "1");
    const app = createServer(engine);
    const res = await app.request("/versions");
    expect(res.status).toBe(200);
    const body = (await res.json()) as { versions: unknown[] };
    expect(body.versions).toContainEqual({ workflow: "paced", version: "1", counts: { pending: 1 }, live: 1, total: 1, drained: true, registered: true });
    expect(body.versions).toContainEqual(expect.objectContaining({ workflow: "ask", counts: {}, live: 0, drained: false, registered: true }));
  });

  it("GET /openapi.json is OpenAPI 3.1 and describes every route the app serves", async () => {
    const engine = await testEngine("memory", { workflows: TEST_WORKFLOWS });
    // With token auth: the ticket routes (/auth/*) exist only then.
    const app = createServer(engine, { auth: "tokens" });
    const res = await app.request("/openapi.json");
    expect(res.status).toBe(200);
    const doc = (await res.json()) as { openapi: string; paths: Record<string, Record<string, any>> };
    expect(doc.openapi).toBe("3.1.0");
    const served = app.routes.filter((r) => r.method !== "ALL").map((r) => `${r.method.toLowerCase()} ${openApiPath(r.path)}`);
    expect(served.length).toBeGreaterThanOrEqual(14);
    const described = Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((method) => `${method} ${path}`));
    expect(new Set(described)).toEqual(new Set(served));
    expect(ROUTES).toHaveLength(served.length);
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        expect(op.summary, `${method} ${path}`).toBeTruthy();
        expect(Object.keys(op.responses).length, `${method} ${path}`).toBeGreaterThan(0);
      }
    }
    // Generated from the zod schemas: the start body's required fields and the run id's rules are there.
    expect(doc.paths["/runs"]!.post.requestBody.content["application/json"].schema).toMatchObject({ required: ["workflow"], additionalProperties: false });
    const idParam = doc.paths["/runs/{id}"]!.get.parameters.find((p: any) => p.name === "id");
    expect(idParam).toMatchObject({ in: "path", required: true, schema: { type: "string", minLength: 1, maxLength: 256 } });
  });
});
