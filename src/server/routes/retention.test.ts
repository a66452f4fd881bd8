import { describe, expect, it } from "vitest";
import { onCleanup, testEngine } from "../../../test/support/engines.js";
import { ask, testServer } from "../../../test/support/server.js";
import { waitFor } from "../../testing/wait-for.js";
import { issueToken } from "../auth/tokens.js";

async function setup() {
  const engine = await testEngine("sqlite", { workflows: [ask] });
  const worker = engine.startWorker({ pollInterval: 10 });
  onCleanup(() => worker.stop());
  const server = await testServer(engine, { auth: "tokens" });
  const now = Date.now();
  const tokens = {
    admin: (await issueToken(engine.store, { name: "root", scopes: ["admin"] }, now)).token,
    reader: (await issueToken(engine.store, { name: "viewer", scopes: ["read", "write"] }, now)).token,
  };
  const call = async (token: string, method: string, path: string, body?: unknown) => {
    const res = await fetch(`${server.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  return { engine, tokens, call };
}

describe("GET /runs/:id/export and POST /runs/import", () => {
  it("export and import need admin, refuse live runs unless forced, round-trip and are audited", async () => {
    const { engine, tokens, call } = await setup();
    await engine.start(ask, {}, { runId: "a/r1" });
    await waitFor(async () => (await engine.getRun("a/r1")).status === "suspended");

    expect((await call(tokens.reader, "GET", "/runs/a%2Fr1/export")).status).toBe(403);
    const live = await call(tokens.admin, "GET", "/runs/a%2Fr1/export");
    expect([live.status, live.body.error.code]).toEqual([409, "RUN_NOT_FINISHED"]);
    const forced = await call(tokens.admin, "GET", "/runs/a%2Fr1/export?force=true");
    expect(forced.status).toBe(200);
    expect(forced.body).toMatchObject({ format: "cairn.run-export", version: 1, run: { runId: "a/r1", status: "suspended" } });
    expect((await call(tokens.admin, "GET", "/runs/nope/export")).status).toBe(404);

    expect((await call(tokens.reader, "POST", "/runs/import", forced.body)).status).toBe(403);
    const taken = await call(tokens.admin, "POST", "/runs/import", forced.body);
    expect([taken.status, taken.body.error.code]).toEqual([409, "RUN_CONFLICT"]);
    const bad = await call(tokens.admin, "POST", "/runs/import", { ...forced.body, journal: [] });
    expect([bad.status, bad.body.error.code]).toEqual([400, "INVALID_INPUT"]);
    expect(bad.body.error.message).toMatch(/journal/);
    const copy = await call(tokens.admin, "POST", "/runs/import?as=a%2Fcopy", forced.body);
    expect(copy.status).toBe(201);
    expect(copy.body).toMatchObject({ runId: "a/copy", status: "suspended" });

    // The imported copy is live: answering its question lets a worker finish it.
    const [request] = await engine.listHumanRequests({ runId: "a/copy" });
    expect(request?.requestId).toBe("a/copy:review#0");
    await engine.respondToHuman(request!.requestId, { action: "answer", option: "approve" });
    expect(await engine.result("a/copy", { timeoutMs: 10_000 })).toBe("approve");

    const audit = await engine.store.listAudit({});
    expect(audit.map((e) => [e.action, e.target, e.actor])).toEqual(
      expect.arrayContaining([
        ["run.export", "a/r1", "token:root"],
        ["run.import", "a/copy", "token:root"],
      ]),
    );
  });
});
