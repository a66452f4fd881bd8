// Small findings over real HTTP (127.0.0.1, token auth, SQLite): a namespaced token's view of
// /workers, and Last-Event-ID checked as strictly as ?after.
import { describe, expect, it } from "vitest";
import { onCleanup, testEngine } from "../../test/support/engines.js";
import { TEST_WORKFLOWS, testServer } from "../../test/support/server.js";
import { waitFor } from "../testing/wait-for.js";
import { issueToken } from "./auth/tokens.js";

async function setup() {
  const engine = await testEngine("sqlite", { workflows: TEST_WORKFLOWS });
  const worker = engine.startWorker({ pollInterval: 10 });
  onCleanup(() => worker.stop());
  const server = await testServer(engine, { auth: "tokens" });
  const now = Date.now();
  const all = (await issueToken(engine.store, { name: "all", scopes: ["read", "write"] }, now)).token;
  const teamA = (await issueToken(engine.store, { name: "team-a", scopes: ["read", "write"], namespace: "a" }, now)).token;
  const get = async (token: string, path: string, headers: Record<string, string> = {}) => {
    const res = await fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${token}`, ...headers } });
    return { status: res.status, body: (await res.json()) as any };
  };
  return { engine, worker, all, teamA, get };
}

describe("small findings", () => {
  it("a namespaced token gets only a namespace view of /workers: no host, pid, worker id or load", async () => {
    const { worker, all, teamA, get } = await setup();
    await waitFor(async () => (await get(all, "/workers")).body.workers.length === 1, { what: "the worker listed" });
    const full = (await get(all, "/workers")).body.workers[0];
    expect(full.workerId).toBe(worker.workerId);
    expect(full.pid).toBe(process.pid);
    const scoped = await get(teamA, "/workers");
    expect(scoped.status).toBe(200);
    const text = JSON.stringify(scoped.body);
    expect(text).not.toContain(worker.workerId);
    expect(text).not.toContain(full.host);
    expect(scoped.body.workers).toEqual([{ ...full, workerId: "worker-1", host: "", pid: 0, runsHeld: 0 }]);
  });

  it("Last-Event-ID above 2^53 - 1 is refused (400) as ?after is, not rounded", async () => {
    const { engine, all, get } = await setup();
    await engine.start("paced", { steps: 0 }, { runId: "done" });
    await waitFor(async () => (await engine.getRun("done")).status === "completed");
    for (const big of ["9007199254740992", "9007199254740993", "9999999999999999"]) {
      const header = await get(all, "/runs/done/stream", { "last-event-id": big });
      expect([big, header.status, header.body.error.code]).toEqual([big, 400, "INVALID_INPUT"]);
      expect(header.body.error.message).toContain("Last-Event-ID");
      expect((await get(all, `/runs/done/stream?after=${big}`)).status).toBe(400);
    }
  });
});
