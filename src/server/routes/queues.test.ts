import { describe, expect, it } from "vitest";
import { testEngine } from "../../../test/support/engines.js";
import { testServer } from "../../../test/support/server.js";
import { defineWorkflow } from "../../engine/define-workflow.js";
import { issueToken } from "../auth/tokens.js";
import { createServer } from "../create-server.js";

const job = defineWorkflow({ name: "job", queue: "jobs", run: async (ctx) => ctx.step("s", () => 1) });

describe("GET /queues", () => {
  it("lists each queue's limits and counts, in total and per key", async () => {
    const engine = await testEngine("sqlite", { workflows: [job], queues: { jobs: { concurrency: 2, perKeyConcurrency: 1 } } });
    await engine.start(job, undefined, { concurrencyKey: "c1" });
    await engine.start(job, undefined, { concurrencyKey: "c1" });
    await engine.start(job, undefined);
    const res = await createServer(engine).request("/queues");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      queues: [
        {
          name: "jobs",
          limits: { name: "jobs", concurrency: 2, perKeyConcurrency: 1, rateLimit: null },
          running: 0,
          waiting: 3,
          suspended: 0,
          keys: [
            { queue: "jobs", concurrencyKey: null, running: 0, waiting: 1, suspended: 0 },
            { queue: "jobs", concurrencyKey: "c1", running: 0, waiting: 2, suspended: 0 },
          ],
        },
      ],
    });
  });

  it("is forbidden to namespaced tokens, like /schedules and /versions: they cover every namespace", async () => {
    const engine = await testEngine("sqlite", { workflows: [job], queues: { jobs: {} } });
    const server = await testServer(engine, { auth: "tokens" });
    const now = Date.now();
    const reader = (await issueToken(engine.store, { name: "viewer", scopes: ["read"] }, now)).token;
    const tenant = (await issueToken(engine.store, { name: "team-a", scopes: ["read"], namespace: "a" }, now)).token;
    for (const path of ["/queues", "/schedules", "/versions"]) {
      const get = (token: string) => fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${token}` } });
      expect((await get(reader)).status, path).toBe(200);
      const refused = await get(tenant);
      expect(refused.status, path).toBe(403);
      expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("FORBIDDEN");
    }
  });
});

describe("POST /runs with flow options", () => {
  it("starts a run in a queue with a key and priority; bad options answer INVALID_INPUT and create nothing", async () => {
    const engine = await testEngine("sqlite", { workflows: [job], queues: { jobs: { concurrency: 1 }, other: {} } });
    const app = createServer(engine);
    const post = (body: unknown) => app.request("/runs", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    const ok = await post({ workflow: "job", queue: "other", concurrencyKey: "c9", priority: 7 });
    expect(ok.status).toBe(201);
    expect(await engine.listQueues()).toMatchObject([
      { name: "jobs", waiting: 0 },
      { name: "other", waiting: 1, keys: [{ concurrencyKey: "c9", waiting: 1 }] },
    ]);
    // Malformed bodies are 400; a well-formed start the engine refuses (an undeclared queue) is 422, like other refused starts.
    for (const [body, status] of [
      [{ workflow: "job", priority: 2.5 }, 400],
      [{ workflow: "job", queue: "bad name" }, 400],
      [{ workflow: "job", queue: "missing" }, 422],
    ] as const) {
      const res = await post(body);
      expect(res.status, JSON.stringify(body)).toBe(status);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe("INVALID_INPUT");
    }
    expect((await engine.listRuns({})).runs).toHaveLength(1);
  });
});
