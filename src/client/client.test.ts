import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { onCleanup, tempDir } from "../../test/support/engines.js";
import { TEST_WORKFLOWS, testServer } from "../../test/support/server.js";
import { isCairnError } from "../core/errors.js";
import { createEngine } from "../engine/create-engine.js";
import type { Engine } from "../engine/engine.js";
import { silentLogger } from "../engine/logger.js";
import { waitFor } from "../testing/wait-for.js";
import { CairnApiError, CairnClient, type ApiJournalEntry } from "./index.js";

async function openEngine(store: string): Promise<Engine> {
  const engine = await createEngine({ store, workflows: TEST_WORKFLOWS, logger: silentLogger });
  engine.startWorker({ pollInterval: 10 });
  onCleanup(() => engine.close());
  return engine;
}

describe("CairnClient", () => {
  it("wraps every route, with typed errors carrying code and status", async () => {
    const engine = await openEngine(`sqlite:${join(tempDir(), "cairn.db")}`);
    const server = await testServer(engine);
    const cairn = new CairnClient({ baseUrl: `${server.url}/` });
    expect(await cairn.health()).toEqual({ status: "ok" });
    expect((await cairn.openApi()).openapi).toBe("3.1.0");

    const started = await cairn.startRun({ workflow: "ask", runId: "c/1" });
    expect(started.created).toBe(true);
    expect((await cairn.startRun({ workflow: "ask", runId: "c/1" })).created).toBe(false);
    const conflict = await cairn.startRun({ workflow: "ask", runId: "c/1", input: 1 }).catch((e: unknown) => e);
    expect(conflict).toBeInstanceOf(CairnApiError);
    expect(conflict).toMatchObject({ code: "RUN_CONFLICT", status: 409 });
    expect(isCairnError(conflict, "RUN_CONFLICT")).toBe(true);

    const [request] = await waitFor(async () => {
      const list = await cairn.listHumanRequests({ runId: "c/1", status: "pending" });
      return list.length > 0 && list;
    });
    expect(request!.requestId).toBe("c/1:review#0");
    expect((await cairn.answer(request!.requestId, { action: "answer", option: "reject" })).status).toBe("answered");
    await waitFor(async () => (await cairn.getRun("c/1")).status === "completed");
    expect((await cairn.getRun("c/1")).output).toBe("reject");

    const page = await cairn.journal("c/1", { after: 1, limit: 2 });
    expect(page.entries.map((e) => e.seq)).toEqual([2, 3]);
    expect(page.nextAfter).toBe(3);
    expect((await cairn.listRuns({ status: ["completed"], workflow: "ask" })).runs.map((r) => r.runId)).toEqual(["c/1"]);
    expect((await cairn.listWorkers()).length).toBe(1);
    expect(await cairn.listVersions()).toContainEqual(expect.objectContaining({ workflow: "ask", counts: { completed: 1 }, live: 0, drained: false }));
    expect((await cairn.listStuckRuns()).runs).toEqual([]);

    await cairn.startRun({ workflow: "paced", input: { steps: 1 }, runId: "c-2" });
    expect(await cairn.sendEvent("c-2", { type: "go", eventId: "e1" })).toEqual({ eventId: "e1", duplicate: false });
    expect(await cairn.sendEvent("c-2", { type: "go", eventId: "e1" })).toEqual({ eventId: "e1", duplicate: true });
    await cairn.startRun({ workflow: "paced", input: { steps: 5 }, runId: "c-3" });
    expect((await cairn.cancel("c-3", "stop")).status).toBe("cancelled");
    await expect(cairn.retry("c-3")).rejects.toMatchObject({ code: "RUN_NOT_FAILED", status: 409 });
    await expect(cairn.getRun("missing")).rejects.toMatchObject({ code: "RUN_NOT_FOUND", status: 404 });
    await expect(cairn.entries("missing").next()).rejects.toMatchObject({ code: "RUN_NOT_FOUND" });
  });

  it("stream() reconnects by itself across a server restart on the same port and file: every entry once, in order", async () => {
    const store = `sqlite:${join(tempDir(), "cairn.db")}`;
    let engine = await openEngine(store);
    let server = await testServer(engine);
    const port = server.port;
    await engine.start("paced", { steps: 3 }, { runId: "live" });
    const cairn = new CairnClient({ baseUrl: server.url });
    const got: ApiJournalEntry[] = [];
    const reconnects: number[] = [];
    const done = cairn.stream("live", { onEntry: (entry) => void got.push(entry), reconnectDelayMs: 20, onReconnect: ({ after }) => reconnects.push(after) });

    await waitFor(() => got.some((e) => e.kind === "run.suspended"));
    await server.close();
    await engine.close();
    engine = await openEngine(store);
    await engine.sendEvent("live", "go", null, { eventId: "g1" }); // entries committed while no server listens
    await waitFor(async () => (await engine.getRun("live")).status === "suspended" && (await engine.getRun("live")).entries > got.length + 3);
    server = await testServer(engine, { port });
    for (const id of ["g2", "g3"]) {
      await waitFor(async () => (await engine.getRun("live")).status === "suspended");
      await engine.sendEvent("live", "go", null, { eventId: id });
    }
    const end = await done;
    const journal = await engine.journal("live");
    expect(end).toEqual({ status: "completed", lastSeq: journal.at(-1)!.seq });
    expect(got.map((e) => [e.seq, e.kind])).toEqual(journal.map((e) => [e.seq, e.kind]));
    expect(reconnects.length).toBeGreaterThan(0);
  });

  it("entries() is an async iterator that stops quietly when its signal aborts", async () => {
    const engine = await openEngine(`sqlite:${join(tempDir(), "cairn.db")}`);
    const server = await testServer(engine);
    await engine.start("paced", { steps: 2 }, { runId: "it" });
    const cairn = new CairnClient({ baseUrl: server.url });
    const controller = new AbortController();
    const seen: number[] = [];
    for await (const entry of cairn.entries("it", { signal: controller.signal, after: 1 })) {
      seen.push(entry.seq);
      if (entry.kind === "run.suspended") controller.abort();
    }
    expect(seen[0]).toBe(2);
    expect(seen).toEqual(seen.map((_, i) => i + 2));
  });
});
