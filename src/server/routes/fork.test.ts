import { describe, expect, it } from "vitest";
import { onCleanup, testEngine } from "../../../test/support/engines.js";
import { TEST_WORKFLOWS } from "../../../test/support/server.js";
import { createServer } from "../create-server.js";

async function setup() {
  const engine = await testEngine("sqlite", { workflows: TEST_WORKFLOWS });
  const worker = engine.startWorker({ pollInterval: 10 });
  onCleanup(() => worker.stop());
  const app = createServer(engine);
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await app.request(path, {
      method,
      ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body), headers: { "content-type": "application/json" } }),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  await engine.start("paced", { steps: 1 }, { runId: "orig" });
  await engine.sendEvent("orig", "go");
  await engine.result("orig", { timeoutMs: 5000 });
  const journal = await engine.journal("orig");
  const completed = journal.filter((e) => e.kind === "step.completed").map((e) => e.seq);
  return { engine, call, journal, completed };
}

describe("POST /runs/:id/fork", () => {
  it("creates the fork (201), returns it again for the same request (200), refuses another fork under its id (409)", async () => {
    const { engine, call, completed } = await setup();
    const atSeq = completed[0]!;
    const first = await call("POST", "/runs/orig/fork", { atSeq, runId: "f1", patch: { seq: atSeq, result: "patched" } });
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ created: true, run: { runId: "f1", workflow: "paced", input: { steps: 1 } } });
    await engine.sendEvent("f1", "go");
    expect(await engine.result("f1", { timeoutMs: 5000 })).toEqual(["patched"]);
    const marker = (await engine.journal("f1")).find((e) => e.kind === "run.forked");
    expect(marker).toMatchObject({ seq: atSeq + 1, data: { fromRunId: "orig", atSeq, patchedSeq: atSeq } });
    const again = await call("POST", "/runs/orig/fork", { atSeq, runId: "f1", patch: { seq: atSeq, result: "patched" } });
    expect(again.status).toBe(200);
    expect(again.body.created).toBe(false);
    const other = await call("POST", "/runs/orig/fork", { atSeq, runId: "f1" });
    expect(other.status).toBe(409);
    expect(other.body.error.code).toBe("RUN_CONFLICT");
    // The fork is a privileged action: audited once, by who made it.
    const audited = await engine.store.listAudit({ action: "run.fork" });
    expect(audited.map((entry) => [entry.actor, entry.target, entry.detail])).toEqual([["anonymous", "f1", { from: "orig", atSeq, patched: atSeq }]]);
  });

  it("answers 400 for a body that fails its schema, 422 for a cut or patch that does not fit the journal, 404 for an unknown run", async () => {
    const { engine, call, journal, completed } = await setup();
    const before = (await engine.listRuns()).runs.length;
    for (const body of [
      {},
      { atSeq: 0 },
      { atSeq: "3" },
      { atSeq: 1.5 },
      { atSeq: 2, extra: 1 },
      { atSeq: 2, patch: { seq: 1 }, runId: "" },
      { atSeq: 2, patch: { result: 1 } },
    ]) {
      const res = await call("POST", "/runs/orig/fork", body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.code).toBe("INVALID_INPUT");
    }
    const last = journal.length;
    const cases: [unknown, RegExp][] = [
      [{ atSeq: last + 1 }, /past the end of run "orig"/],
      [{ atSeq: last, patch: { seq: 1, result: 1 } }, /patch.seq 1 is a run.created entry/],
      [{ atSeq: completed[0]! - 1, patch: { seq: completed[0]!, result: 1 } }, /is after atSeq/],
    ];
    for (const [body, message] of cases) {
      const res = await call("POST", "/runs/orig/fork", body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(res.body.error.code).toBe("INVALID_INPUT");
      expect(res.body.error.message).toMatch(message);
    }
    const ghost = await call("POST", "/runs/ghost/fork", { atSeq: 1 });
    expect(ghost.status).toBe(404);
    expect((await engine.listRuns()).runs.length).toBe(before);
  });
});
